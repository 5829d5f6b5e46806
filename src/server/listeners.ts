// The service's listeners (gRPC, HTTP, debug, the Prometheus scrape), opened and closed together.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RateLimitEngine } from '../engine';
import type { Logger } from '../lib/logger';
import type { ListenAddress, ServerSettings } from '../settings';
import type { StatsStore } from '../stats';
import type { RequestTracer } from '../tracing';
import type { ConfigStatus } from './config-status';
import { createDebugServer } from './debug/debug-server';
import { RateLimitGrpcServer } from './grpc/grpc-server';
import type { HealthState } from './health';
import { createHttpHandler } from './http/http-server';
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

/** An HTTP server as an OpenListener; closing waits for requests in flight. */
async function openHttp(
  server: http.Server,
  where: ListenAddress,
  what: string,
  path = '',
): Promise<OpenListener> {
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

/** The Prometheus scrape on its own listener (PROMETHEUS_ADDR, PROMETHEUS_PATH). */
export function openMetricsListener(endpoint: MetricsEndpoint): Promise<OpenListener> {
  const server = createMetricsServer(endpoint.path, endpoint);
  return openHttp(server, endpoint, 'Prometheus metrics', endpoint.path);
}

async function openGrpc(options: ListenerOptions): Promise<OpenListener> {
  const { settings, engine, health, stats, logger, tracer } = options;
  const server = new RateLimitGrpcServer({
    settings: settings.grpc,
    engine,
    health,
    stats,
    logger,
    tracer,
  });
  const port = await server.listen();
  return {
    port,
    address: settings.grpc.uds ?? `${settings.grpc.host}:${port}`,
    close: (drainMs) => server.shutdown(drainMs),
  };
}

function openHttpFrontEnd({
  settings,
  engine,
  health,
  logger,
  tracer,
}: ListenerOptions): Promise<OpenListener> {
  return openHttp(
    http.createServer(createHttpHandler({ engine, health, logger, tracer })),
    settings.http,
    'HTTP',
  );
}

function openDebug(options: ListenerOptions): Promise<OpenListener> | undefined {
  if (!options.isDebugServed) return undefined;
  const { engine, stats, health, configStatus } = options;
  const server = createDebugServer({ engine, stats, health, config: configStatus });
  return openHttp(server, options.settings.debug, 'debug');
}

/**
 * Opens every listener the options ask for, in turn (a new listener is an opener above and a
 * line here); if one cannot listen, those already open are closed and the error is thrown.
 */
export async function createListeners(options: ListenerOptions): Promise<Listeners> {
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
      options.metrics === undefined ? undefined : openMetricsListener(options.metrics),
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
