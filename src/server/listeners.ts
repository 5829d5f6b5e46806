// The service's listeners (gRPC, HTTP, debug, the Prometheus scrape), opened and closed together.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { RateLimitEngine } from '../engine';
import type { Logger } from '../lib/logger';
import { quotaView, type QuotaService } from '../quota';
import type { ConnectionLimits, LimitsSettings, ListenAddress, ServerSettings } from '../settings';
import type { StatsStore } from '../stats';
import type { RequestTracer } from '../tracing';
import type { ConfigStatus } from './config-status';
import { createDebugServer, type DebugSources } from './debug/debug-server';
import { RateLimitGrpcServer } from './grpc/grpc-server';
import type { HealthState } from './health';
import { createHttpHandler } from './http/http-server';
import { LastResort } from './last-resort';
import { DEFAULT_CONNECTION_LIMITS } from '../settings';
import { ConnectionGate } from './connection-gate';
import { Refusals } from './refusals';
import { createMetricsServer, type MetricsSource } from './metrics/metrics-server';

/** A Prometheus scrape to serve: where, and what it answers. */
export interface MetricsEndpoint extends ListenAddress, MetricsSource {
  readonly path: string;
}

/** One open listener. */
export interface OpenListener {
  readonly port: number;
  /** Where it listens, as the start-up log names it. */
  readonly address: string;
  /** Stops accepting; calls in flight get up to `drainMs` to finish. */
  close(drainMs: number): Promise<void>;
}

export interface ListenerOptions {
  readonly settings: ServerSettings;
  readonly limits: LimitsSettings;
  readonly engine: RateLimitEngine;
  readonly health: HealthState;
  /** When the configuration last loaded or was refused, for the debug listener. */
  readonly configStatus: ConfigStatus;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** Server spans per call; undefined while TRACING_ENABLED is false. */
  readonly tracer: RequestTracer | undefined;
  /** With several workers the first alone serves debug, so its answers come from one process. */
  readonly isDebugServed: boolean;
  /** The scrape this process serves; undefined when Prometheus is off or a supervisor serves it. */
  readonly metrics: MetricsEndpoint | undefined;
  /** The RLQS service (StreamRateLimitQuotas and `/rlqs`); absent: neither is served. */
  readonly quota?: QuotaService;
  /** With WORKERS above 1: every worker's statistics, for the debug listener's `/stats`. */
  readonly statsTotals?: DebugSources['statsTotals'];
}

/** The bound ports (port 0 in the settings asks for a free one); undefined when not opened. */
export interface ListenerPorts {
  readonly grpc: number;
  readonly http: number;
  readonly debug: number | undefined;
  readonly metrics: number | undefined;
}

export interface Listeners {
  readonly ports: ListenerPorts;
  /** Where each listens, for the start-up log line. */
  readonly addresses: Readonly<Record<keyof ListenerPorts, string | undefined>>;
  /** Stops every listener; in-flight calls get up to `drainMs` to finish. */
  close(drainMs: number): Promise<void>;
}

/** Options of every HTTP/1 listener: HEADER_TIMEOUT for a request, IDLE_TIMEOUT between them. */
function httpServerOptions(connection: ConnectionLimits): http.ServerOptions {
  return {
    headersTimeout: connection.headerTimeoutMs,
    requestTimeout: connection.headerTimeoutMs,
    keepAliveTimeout: connection.idleTimeoutMs,
    // Node checks the two request timeouts this often (30 s by default).
    connectionsCheckingInterval: Math.max(100, Math.min(connection.headerTimeoutMs / 2, 30_000)),
  };
}

/** Listens on host:port; resolves with the bound port, or rejects naming what could not listen. */
function listenHttp(server: http.Server, where: ListenAddress, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(new Error(`cannot listen for ${what} on ${where.host}:${where.port}: ${err.message}`));
    };
    server.once('error', onError);
    server.listen(where.port, where.host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function refuseConnect(_req: http.IncomingMessage, socket: Duplex): void {
  socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
}

/**
 * An HTTP server as an OpenListener; closing waits for requests in flight. `gate`, when given,
 * bounds its connections with the other listeners'.
 */
async function openHttp(
  server: http.Server,
  where: ListenAddress,
  what: string,
  path = '',
  gate?: ConnectionGate,
): Promise<OpenListener> {
  // Node closes a CONNECT request without a word unless someone listens: answer it instead.
  server.on('connect', refuseConnect);
  gate?.guard(server);
  const port = await listenHttp(server, where, what);
  return {
    port,
    address: `${where.host}:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/**
 * The Prometheus scrape on its own listener (PROMETHEUS_ADDR, PROMETHEUS_PATH), within the
 * connection bounds of the other listeners when `gate` is given. The supervisor of WORKERS has
 * no settings of the limits section at hand nor statistics: it gets the connection limits'
 * defaults, no gate (its one listener is the scrape), and answers an unexpected error 500
 * without counting.
 */
export function openMetricsListener(
  endpoint: MetricsEndpoint,
  connection: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
  lastResort?: LastResort,
  gate?: ConnectionGate,
): Promise<OpenListener> {
  const server = createMetricsServer(endpoint.path, endpoint, {
    serverOptions: httpServerOptions(connection),
    lastResort,
  });
  return openHttp(server, endpoint, 'Prometheus metrics', endpoint.path, gate);
}

interface Opening extends ListenerOptions {
  readonly lastResort: LastResort;
  /** MAX_CONNECTIONS and MAX_CONNECTIONS_PER_PEER, across the listeners of the process. */
  readonly gate: ConnectionGate;
  readonly refusals: Refusals;
}

async function openGrpc(options: Opening): Promise<OpenListener> {
  const { settings, engine, health, stats, logger, limits, lastResort, tracer } = options;
  const ignoredCa = settings.grpc.ignoredServerCaFile;
  if (ignoredCa !== undefined)
    logger.warn(
      'GRPC_SERVER_TLS_CA_CERT is ignored, as the reference ignores it: client certificates are asked for and verified only with GRPC_CLIENT_TLS_CACERT',
      { file: ignoredCa, clientCaFile: settings.grpc.tls?.clientCaFile ?? 'none' },
    );
  const server = new RateLimitGrpcServer({
    settings: settings.grpc,
    engine,
    health,
    stats,
    logger,
    limits,
    lastResort,
    tracer,
    gate: options.gate,
    refusals: options.refusals,
    ...(options.quota && {
      quota: {
        streams: options.quota,
        maxStreamsPerConnection: options.quota.limits.maxStreamsPerConnection,
        maxBucketIdBytes: options.quota.limits.maxBucketIdBytes,
      },
    }),
  });
  const port = await server.listen();
  return {
    port,
    address: settings.grpc.uds ?? `${settings.grpc.host}:${port}`,
    close: (drainMs) => server.shutdown(drainMs),
  };
}

function openHttpFrontEnd(options: Opening): Promise<OpenListener> {
  const { settings, engine, health, logger, limits, lastResort, tracer } = options;
  const handler = createHttpHandler({
    engine,
    health,
    logger,
    limits: limits.request,
    lastResort,
    tracer,
  });
  return openHttp(
    http.createServer(httpServerOptions(limits.connection), handler),
    settings.http,
    'HTTP',
    '',
    options.gate,
  );
}

function openDebug(options: Opening): Promise<OpenListener> | undefined {
  if (!options.isDebugServed) return undefined;
  const { engine, stats, health, configStatus, settings, limits, lastResort, quota } = options;
  const totals = options.statsTotals;
  const server = createDebugServer(
    {
      engine,
      stats,
      health,
      config: configStatus,
      ...(quota && { quota: () => quotaView(quota) }),
      ...(totals && { statsTotals: totals }),
    },
    {
      isProfilingEnabled: settings.debug.isProfilingEnabled,
      lastResort,
      serverOptions: httpServerOptions(limits.connection),
    },
  );
  return openHttp(server, settings.debug, 'debug', '', options.gate);
}

/**
 * Opens every listener the options ask for, in turn (a new listener is an opener above and a
 * line here); if one cannot listen, those already open are closed and the error is thrown.
 */
export async function createListeners(listenerOptions: ListenerOptions): Promise<Listeners> {
  const { stats, logger, limits } = listenerOptions;
  const refusals = new Refusals(stats, logger);
  const options: Opening = {
    ...listenerOptions,
    lastResort: new LastResort(stats, logger),
    gate: new ConnectionGate(limits.connection, refusals.refuse),
    refusals,
  };
  const opened: OpenListener[] = [];
  const close = async (drainMs: number): Promise<void> => {
    await Promise.all(opened.map((listener) => listener.close(drainMs)));
  };
  const open = async <T extends OpenListener | undefined>(opening: Promise<T> | T): Promise<T> => {
    const listener = await opening;
    if (listener !== undefined) opened.push(listener);
    return listener;
  };
  try {
    const grpc = await open(openGrpc(options));
    const httpFrontEnd = await open(openHttpFrontEnd(options));
    const debug = await open(openDebug(options));
    const metrics = await open(
      options.metrics === undefined
        ? undefined
        : openMetricsListener(
            options.metrics,
            options.limits.connection,
            options.lastResort,
            options.gate,
          ),
    );
    return {
      ports: {
        grpc: grpc.port,
        http: httpFrontEnd.port,
        debug: debug?.port,
        metrics: metrics?.port,
      },
      addresses: {
        grpc: grpc.address,
        http: httpFrontEnd.address,
        debug: debug?.address,
        metrics: metrics?.address,
      },
      close,
    };
  } catch (err: unknown) {
    await close(0);
    throw err;
  }
}
