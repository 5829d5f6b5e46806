// The gRPC front end: envoy.service.ratelimit.v3.RateLimitService, the Rate Limit Quota
// Service and grpc.health.v1.Health, served over HTTP/2 frames directly (../h2). The service
// needs unary calls and a few streams, not a general gRPC server, and both grpc-js and
// node:http2 cost more per call than the decision itself (docs/decisions/own-http2-and-protobuf.md).
// router.ts checks and dispatches calls; rls-method.ts, rlqs-method.ts and health-service.ts
// serve them; sessions.ts ages and drains connections; replies.ts and unary.ts carry the
// framing; tls/ serves it over TLS when GRPC_SERVER_USE_TLS is set; node-http2.ts serves the
// same layer on node:http2 when GRPC_HTTP2 is node.
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../../lib/logger';
import { ignore } from '../../lib/ignore';
import {
  acceptH2,
  checkSharedReads,
  type H2Handlers,
  type H2Headers,
  type H2SessionOptions,
  type H2Stream,
} from '../h2';
import type { GrpcListenerSettings, LimitsSettings } from '../../settings';
import type { StatsStore } from '../../stats';
import type { RequestTracer } from '../../tracing';
import type { HealthState } from '../health';
import type { LastResort } from '../last-resort';
import { GrpcHealthService, HEALTH_CHECK, HEALTH_WATCH } from './health-service';
import {
  deadlinePassed,
  SHOULD_RATE_LIMIT,
  shouldRateLimitMethod,
  type Decider,
} from './rls-method';
import { routeCalls, type MethodHandler } from './router';
import { RlqsMethod, STREAM_RATE_LIMIT_QUOTAS, type QuotaStreams } from './rlqs-method';
import { Sessions, type SessionEvents } from './sessions';
import type { ConnectionGate } from '../connection-gate';
import { Refusals } from '../refusals';
import { STAT } from '../../stats';
import { Deadlines } from './deadlines';
import { TimeoutQueue } from './timeout-queue';
import { createNodeHttp2SecureServer, createNodeHttp2Server, serveOnNodeHttp2 } from './node-http2';
import { createSecureGrpcServer, type SecureGrpcServer } from './tls/secure-server';
import { expireBody, type BodyWait, type UnaryReading } from './unary';
import { UnsentBytes } from './unsent-bytes';

export interface GrpcServerOptions {
  readonly settings: GrpcListenerSettings;
  readonly engine: Decider;
  readonly health: HealthState;
  readonly stats: StatsStore;
  readonly logger: Logger;
  readonly limits: LimitsSettings;
  readonly lastResort: LastResort;
  /** Server spans per call; undefined while tracing is off. */
  readonly tracer: RequestTracer | undefined;
  /** Bounds connections at accept, with the other listeners; undefined: unbounded. */
  readonly gate?: ConnectionGate;
  /** Where refusals of the buffer budget are counted and logged; undefined: not counted. */
  readonly refusals?: Refusals;
  /** The RLQS streams' service and bound; undefined: StreamRateLimitQuotas is not served. */
  readonly quota?: {
    readonly streams: QuotaStreams;
    readonly maxStreamsPerConnection: number;
    readonly maxBucketIdBytes: number;
  };
}

/** The listen address as logs and errors name it. */
export function grpcAddress(settings: GrpcListenerSettings): string {
  if (settings.uds !== undefined) return `unix:${settings.uds}`;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return `${host}:${settings.port}`;
}

/** SETTINGS_MAX_HEADER_LIST_SIZE: requests with more header bytes are answered 431. */
const MAX_HEADER_LIST_BYTES = 64 * 1024;

export class RateLimitGrpcServer {
  private readonly server: net.Server;
  /** Set when the listener serves TLS: the file watch and the client SAN check. */
  private readonly secure: SecureGrpcServer | undefined;
  private readonly healthService: GrpcHealthService;
  private readonly sessions: Sessions;
  private readonly bodyTimeouts: TimeoutQueue<BodyWait>;
  private readonly deadlines = new Deadlines(deadlinePassed);
  private readonly rlqs: RlqsMethod | undefined;
  private readonly unsent: UnsentBytes;

  constructor(private readonly options: GrpcServerOptions) {
    const { engine, health, stats, logger, limits, lastResort, tracer } = options;
    const connection = limits.connection;
    this.bodyTimeouts = new TimeoutQueue(connection.headerTimeoutMs, expireBody);
    const reading: UnaryReading = {
      logger,
      lastResort,
      maxRequestBytes: limits.request.maxRequestBytes,
      headerTimeoutMs: connection.headerTimeoutMs,
      bodyTimeouts: this.bodyTimeouts,
    };
    this.healthService = new GrpcHealthService({ health, stats, reading });
    const refusals = options.refusals ?? new Refusals(stats, logger);
    this.unsent = new UnsentBytes(connection, refusals);
    this.rlqs = this.rlqsMethod(reading, refusals);
    const leastConnectionBytes = limits.request.maxRequestBytes + 5;
    this.sessions = new Sessions(
      { ...options.settings, ...connection, leastConnectionBytes },
      (session) => {
        this.healthService.endWatchesOf(session);
        this.rlqs?.endStreamsOf(session);
      },
      this.sessionEvents(),
    );
    const methods = new Map<string, MethodHandler>([
      [
        SHOULD_RATE_LIMIT,
        shouldRateLimitMethod({
          engine,
          stats,
          reading,
          limits: limits.request,
          tracer,
          deadlines: this.deadlines,
        }),
      ],
      [HEALTH_CHECK, this.healthService.check()],
      [HEALTH_WATCH, this.healthService.watch()],
      ...(this.rlqs ? [[STREAM_RATE_LIMIT_QUOTAS, this.rlqs.handler] as const] : []),
    ]);
    const handlers = this.handlers(routeCalls(methods, lastResort));
    const h2Options: H2SessionOptions = {
      maxConcurrentStreams: connection.maxConcurrentStreams,
      maxHeaderListBytes: MAX_HEADER_LIST_BYTES,
    };
    if (options.settings.http2 === 'node') {
      // A fallback an operator chose, and a costly one: said once, where they will see it.
      logger.warn('gRPC is served on node:http2 (GRPC_HTTP2=node), at about 4x the CPU per call');
      [this.server, this.secure] = this.onNodeHttp2(h2Options, handlers);
    } else {
      [this.server, this.secure] = this.onOwnHttp2(h2Options, handlers);
    }
    // A TLS handshake that fails (plaintext client, no or wrong client certificate) is the
    // client's problem, reported to it by the handshake; nothing here to log per attempt.
    this.server.on('tlsClientError', ignore);
    options.gate?.guard(this.server);
  }

  /** The statistics of the connections' bounds. */
  private sessionEvents(): SessionEvents {
    const { stats, refusals } = this.options;
    const idleClosed = stats.counter(STAT.idleClosed);
    return {
      refused: refusals?.refuse ?? ignore,
      idleClosed: () => {
        idleClosed.inc();
      },
    };
  }

  /** StreamRateLimitQuotas, when the quota service is on. */
  private rlqsMethod(reading: UnaryReading, refusals: Refusals): RlqsMethod | undefined {
    const { quota, tracer, limits } = this.options;
    if (quota === undefined) return undefined;
    return new RlqsMethod({
      ...quota,
      ...reading,
      tracer,
      messageTimeoutMs: limits.connection.messageTimeoutMs,
      firstMessageTimeoutMs: limits.connection.firstMessageTimeoutMs,
      unsent: this.unsent,
      refusals,
    });
  }

  /** What becomes of each connection and call, on either HTTP/2. */
  private handlers(route: (stream: H2Stream, headers: H2Headers) => void): H2Handlers {
    const { lastResort } = this.options;
    return {
      session: (session) => {
        if (this.secure?.admits(session) === false) return;
        // Thrown inside the connection's frame handling, where nothing expected it: the
        // connection ends with INTERNAL_ERROR; the cause is logged and counted.
        session.on('error', (err: unknown) => {
          lastResort.report(err, 'gRPC connection');
        });
        this.sessions.add(session);
      },
      stream: (stream, headers) => {
        this.sessions.addStream(stream);
        route(stream, headers);
      },
    };
  }

  /** The listener on the service's own HTTP/2 (../h2). */
  private onOwnHttp2(
    h2Options: H2SessionOptions,
    handlers: H2Handlers,
  ): [net.Server, SecureGrpcServer | undefined] {
    const { settings, stats, logger } = this.options;
    const secure =
      settings.tls === undefined
        ? undefined
        : createSecureGrpcServer(settings.tls, stats, logger, (o) => tls.createServer(o));
    const server = secure?.server ?? net.createServer({ pauseOnConnect: true });
    acceptH2(server, secure !== undefined, h2Options, handlers);
    return [server, secure];
  }

  /** The listener on node:http2 (GRPC_HTTP2=node), with the same TLS settings and reload. */
  private onNodeHttp2(
    h2Options: H2SessionOptions,
    handlers: H2Handlers,
  ): [net.Server, SecureGrpcServer | undefined] {
    const { settings, stats, logger } = this.options;
    const secure =
      settings.tls === undefined
        ? undefined
        : createSecureGrpcServer(settings.tls, stats, logger, (o) =>
            createNodeHttp2SecureServer(h2Options, o),
          );
    const server = secure?.server ?? createNodeHttp2Server(h2Options);
    serveOnNodeHttp2(server, handlers);
    return [server, secure];
  }

  /** Binds the listener; resolves with the bound TCP port (0 for a unix socket). */
  async listen(): Promise<number> {
    const { settings, logger } = this.options;
    const address = grpcAddress(settings);
    if (settings.http2 !== 'node' && this.secure === undefined) {
      // Plaintext connections share one read buffer only where this Node still counts a
      // socket moved out of its server (../h2/shared-reads.ts); else each reads on its own.
      const shared = await checkSharedReads();
      if (!shared.isOn)
        logger.warn(
          `gRPC connections read into buffers of their own: ${shared.why} (Node ${process.version})`,
        );
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(new Error(`cannot listen for gRPC on ${address}: ${err.message}`));
      };
      this.server.once('error', onError);
      const onListening = (): void => {
        this.server.off('error', onError);
        resolve();
      };
      if (settings.uds !== undefined) this.server.listen(settings.uds, onListening);
      else this.server.listen(settings.port, settings.host, onListening);
    });
    const bound = this.server.address();
    return bound !== null && typeof bound === 'object' ? bound.port : 0;
  }

  /**
   * Stops taking new connections, sends GOAWAY on the open ones and waits for calls in flight
   * up to `graceMs`; then cuts whatever is left. Health watches end at once.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.healthService.close();
    this.secure?.close();
    const drained = this.sessions.drain(this.server, graceMs);
    // The GOAWAYs are out: RLQS streams end now, so their Envoys reconnect elsewhere.
    this.rlqs?.close();
    await drained;
    this.bodyTimeouts.clear();
    this.deadlines.clear();
    this.unsent.clear();
  }
}
