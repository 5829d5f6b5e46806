// The gRPC front end: envoy.service.ratelimit.v3.RateLimitService and grpc.health.v1.Health,
// served on node:http2 directly. grpc-js's server costs more CPU per call than the whole
// decision on the memory backend (docs/performance.md has the profile), and the service needs
// only unary calls and one server stream, so this file speaks the gRPC protocol itself.
import http2 from 'node:http2';
import type { RateLimitEngine } from '../../engine';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import type { GrpcListenerSettings } from '../../settings';
import { STAT, type Counter, type StatsStore, type Timer } from '../../stats';
import { toEdgeError } from '../errors';
import type { HealthState } from '../health';
import { decodeRateLimitRequest, encodeRateLimitResponse } from '../wire/rls-codec';
import { decodeHealthRequest, encodeHealthResponse, type ServingStatus } from './health-codec';
import {
  ACCEPT_ENCODING,
  CallError,
  GrpcStatus,
  MAX_RECEIVE_MESSAGE_BYTES,
  encodeStatusMessage,
  isAcceptedEncoding,
  parseTimeout,
  singleMessage,
  uncompressed,
  type FramedMessage,
} from './protocol';

const SHOULD_RATE_LIMIT = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
const HEALTH_WATCH = '/grpc.health.v1.Health/Watch';

/** The service names the health service answers for; "" is the whole server. */
const HEALTH_SERVICES = new Set(['', 'ratelimit', 'envoy.service.ratelimit.v3.RateLimitService']);

/** setTimeout's ceiling; a longer connection age is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

// Shared, never mutated: node:http2 reads header objects without keeping them.
const RESPONSE_HEADERS: http2.OutgoingHttpHeaders = Object.freeze({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': ACCEPT_ENCODING,
});
const OK_TRAILERS: http2.OutgoingHttpHeaders = Object.freeze({ 'grpc-status': '0' });
const WAIT_FOR_TRAILERS = Object.freeze({ waitForTrailers: true });
const END_STREAM = Object.freeze({ endStream: true });

export interface GrpcServerOptions {
  readonly settings: GrpcListenerSettings;
  readonly engine: RateLimitEngine;
  readonly health: HealthState;
  readonly stats: StatsStore;
  readonly logger: Logger;
}

/** The listen address as logs and errors name it. */
export function grpcAddress(settings: GrpcListenerSettings): string {
  if (settings.uds !== undefined) return `unix:${settings.uds}`;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return `${host}:${settings.port}`;
}

function ignore(): void {
  // Stream and session errors are the peer going away; the call's own path reports the rest.
}

/** Answers a call with a status and no message (a trailers-only response). */
function sendStatus(stream: http2.ServerHttp2Stream, code: GrpcStatus, message: string): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-accept-encoding': ACCEPT_ENCODING,
      'grpc-status': String(code),
      'grpc-message': encodeStatusMessage(message),
    },
    END_STREAM,
  );
}

function sendTrailers(this: http2.ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/** Answers a unary call with one framed message and status OK. */
function sendMessage(stream: http2.ServerHttp2Stream, framed: Buffer): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond(RESPONSE_HEADERS, WAIT_FOR_TRAILERS);
  stream.once('wantTrailers', sendTrailers);
  stream.end(framed);
}

/** Reads a unary request body, refusing one larger than a message may be. */
function readBody(
  stream: http2.ServerHttp2Stream,
  onBody: (body: Buffer) => void,
  onError: (err: CallError) => void,
): void {
  let first: Buffer | undefined;
  let rest: Buffer[] | undefined;
  let size = 0;
  let isRefused = false;
  stream.on('data', (chunk: Buffer) => {
    if (isRefused) return;
    size += chunk.length;
    if (size > MAX_RECEIVE_MESSAGE_BYTES + 5) {
      isRefused = true;
      onError(
        new CallError(
          GrpcStatus.RESOURCE_EXHAUSTED,
          `the request is larger than the ${MAX_RECEIVE_MESSAGE_BYTES} bytes a message may have`,
        ),
      );
      return;
    }
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
  });
  stream.on('end', () => {
    if (isRefused) return;
    onBody(rest !== undefined ? Buffer.concat(rest, size) : (first ?? Buffer.alloc(0)));
  });
}

export class RateLimitGrpcServer {
  private readonly server: http2.Http2Server;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly watchers = new Map<http2.ServerHttp2Stream, string>();
  private boundPort = 0;
  private isShuttingDown = false;
  private readonly totalRequests: Counter;
  private readonly responseTime: Timer;
  // The reference counts every unary call, health checks included, under the method's name.
  private readonly checkRequests: Counter;
  private readonly checkTime: Timer;

  constructor(private readonly options: GrpcServerOptions) {
    this.totalRequests = options.stats.counter(STAT.totalRequests('ShouldRateLimit'));
    this.responseTime = options.stats.timer(STAT.responseTime('ShouldRateLimit'));
    this.checkRequests = options.stats.counter(STAT.totalRequests('Check'));
    this.checkTime = options.stats.timer(STAT.responseTime('Check'));
    this.server = http2.createServer();
    this.server.on('stream', this.onStream);
    this.server.on('session', this.onSession);
    this.server.on('sessionError', ignore);
    options.health.onChange(() => {
      for (const [stream, service] of this.watchers) this.writeHealth(stream, service);
    });
  }

  private readonly onSession = (session: http2.ServerHttp2Session): void => {
    this.sessions.add(session);
    session.on('error', ignore);
    const { maxConnectionAgeMs, maxConnectionAgeGraceMs } = this.options.settings;
    let ageTimer: NodeJS.Timeout | undefined;
    if (maxConnectionAgeMs > 0 && maxConnectionAgeMs < MAX_TIMER_MS) {
      // Spread by ±10% so connections opened together are not all cut together (as gRPC does).
      const jittered = maxConnectionAgeMs * (0.9 + Math.random() * 0.2);
      ageTimer = setTimeout(() => {
        this.closeSession(session, maxConnectionAgeGraceMs);
      }, jittered);
      ageTimer.unref();
    }
    session.once('close', () => {
      if (ageTimer !== undefined) clearTimeout(ageTimer);
      this.sessions.delete(session);
    });
  };

  /** GOAWAY now, calls in flight may finish; whatever is left after `graceMs` is cut. */
  private closeSession(session: http2.ServerHttp2Session, graceMs: number): void {
    if (session.closed || session.destroyed) return;
    for (const [stream] of this.watchers) {
      if (stream.session === session) this.endWatch(stream);
    }
    session.close();
    const timer = setTimeout(
      () => {
        session.destroy();
      },
      Math.min(graceMs, MAX_TIMER_MS),
    );
    timer.unref();
    session.once('close', () => {
      clearTimeout(timer);
    });
  }

  private readonly onStream = (
    stream: http2.ServerHttp2Stream,
    headers: http2.IncomingHttpHeaders,
  ): void => {
    stream.on('error', ignore);
    const path = headers[':path'];
    if (headers[':method'] !== 'POST') {
      stream.respond({ ':status': 405, allow: 'POST' }, END_STREAM);
      return;
    }
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415, accept: 'application/grpc' }, END_STREAM);
      return;
    }
    const encoding = headers['grpc-encoding'];
    if (!isAcceptedEncoding(encoding)) {
      sendStatus(
        stream,
        GrpcStatus.UNIMPLEMENTED,
        `grpc-encoding ${String(encoding)} is not supported; use one of ${ACCEPT_ENCODING}`,
      );
      return;
    }
    switch (path) {
      case SHOULD_RATE_LIMIT:
        this.shouldRateLimit(stream, encoding, parseTimeout(headers['grpc-timeout']));
        return;
      case HEALTH_CHECK: {
        const started = process.hrtime.bigint();
        this.checkRequests.inc();
        this.unary(stream, encoding, (message) => {
          this.check(stream, message);
          this.checkTime.record(Number(process.hrtime.bigint() - started) / 1e6);
        });
        return;
      }
      case HEALTH_WATCH:
        this.unary(stream, encoding, (message) => {
          this.watch(stream, message);
        });
        return;
      case undefined:
      default:
        sendStatus(
          stream,
          GrpcStatus.UNIMPLEMENTED,
          `the method ${String(path)} is not implemented by this server`,
        );
    }
  };

  /** Reads the one request message of a call and hands it over; protocol errors end the call. */
  private unary(
    stream: http2.ServerHttp2Stream,
    encoding: string | undefined,
    handle: (message: FramedMessage) => void,
  ): void {
    readBody(
      stream,
      (body) => {
        let message: FramedMessage;
        try {
          message = uncompressed(singleMessage(body), encoding);
        } catch (err: unknown) {
          this.fail(stream, err);
          return;
        }
        handle(message);
      },
      (err) => {
        this.fail(stream, err);
      },
    );
  }

  private fail(stream: http2.ServerHttp2Stream, err: unknown): void {
    if (err instanceof CallError) {
      sendStatus(stream, err.code, err.message);
      return;
    }
    const edge = toEdgeError(err);
    if (edge.kind !== 'request') {
      this.options.logger.warn('rate limit request failed', { error: describeError(err) });
    }
    sendStatus(stream, edge.grpcCode, edge.message);
  }

  private shouldRateLimit(
    stream: http2.ServerHttp2Stream,
    encoding: string | undefined,
    timeoutMs: number | undefined,
  ): void {
    const started = process.hrtime.bigint();
    this.totalRequests.inc();
    this.unary(stream, encoding, (message) => {
      const finish = (): void => {
        this.responseTime.record(Number(process.hrtime.bigint() - started) / 1e6);
      };
      let request;
      try {
        request = decodeRateLimitRequest(message.buf, message.start, message.end);
      } catch (err: unknown) {
        finish();
        this.fail(stream, err);
        return;
      }
      this.options.engine.shouldRateLimit(request).then(
        (response) => {
          finish();
          // Past its deadline the caller has stopped waiting: say so instead of a stale answer.
          if (
            timeoutMs !== undefined &&
            Number(process.hrtime.bigint() - started) / 1e6 > timeoutMs
          ) {
            sendStatus(stream, GrpcStatus.DEADLINE_EXCEEDED, 'the deadline passed');
            return;
          }
          sendMessage(stream, encodeRateLimitResponse(response, true));
        },
        (err: unknown) => {
          finish();
          this.fail(stream, err);
        },
      );
    });
  }

  private healthOf(service: string): ServingStatus {
    if (!HEALTH_SERVICES.has(service)) return 'SERVICE_UNKNOWN';
    return this.options.health.isHealthy() ? 'SERVING' : 'NOT_SERVING';
  }

  private check(stream: http2.ServerHttp2Stream, message: FramedMessage): void {
    const service = decodeHealthRequest(message);
    if (service === undefined) {
      sendStatus(stream, GrpcStatus.INTERNAL, 'the request is not a HealthCheckRequest');
      return;
    }
    if (!HEALTH_SERVICES.has(service)) {
      sendStatus(stream, GrpcStatus.NOT_FOUND, `unknown service ${service}`);
      return;
    }
    sendMessage(stream, encodeHealthResponse(this.healthOf(service)));
  }

  private watch(stream: http2.ServerHttp2Stream, message: FramedMessage): void {
    const service = decodeHealthRequest(message);
    if (service === undefined) {
      sendStatus(stream, GrpcStatus.INTERNAL, 'the request is not a HealthCheckRequest');
      return;
    }
    if (this.isShuttingDown || stream.destroyed || stream.closed) return;
    stream.respond(RESPONSE_HEADERS, WAIT_FOR_TRAILERS);
    stream.once('wantTrailers', sendTrailers);
    this.watchers.set(stream, service);
    stream.once('close', () => this.watchers.delete(stream));
    this.writeHealth(stream, service);
  }

  private writeHealth(stream: http2.ServerHttp2Stream, service: string): void {
    if (!stream.destroyed && !stream.closed)
      stream.write(encodeHealthResponse(this.healthOf(service)));
  }

  private endWatch(stream: http2.ServerHttp2Stream): void {
    this.watchers.delete(stream);
    if (!stream.destroyed && !stream.closed) stream.end();
  }

  /** Binds the listener; resolves with the bound TCP port (0 for a unix socket). */
  async listen(): Promise<number> {
    const { settings } = this.options;
    const address = grpcAddress(settings);
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
    this.boundPort = bound !== null && typeof bound === 'object' ? bound.port : 0;
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  /**
   * Stops taking new connections, sends GOAWAY on the open ones and waits for calls in flight
   * up to `graceMs`; then cuts whatever is left.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.isShuttingDown = true;
    for (const [stream] of this.watchers) this.endWatch(stream);
    const closed = new Promise<void>((resolve) => {
      if (!this.server.listening) {
        resolve();
        return;
      }
      this.server.close(() => {
        resolve();
      });
    });
    for (const session of this.sessions) session.close();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([closed, deadline]);
    clearTimeout(timer);
    for (const session of this.sessions) session.destroy();
  }
}
