// The gRPC front end: envoy.service.ratelimit.v3.RateLimitService and grpc.health.v1.Health.
import { describeError } from '../../lib/errors';
import * as grpc from '@grpc/grpc-js';
import type { RateLimitEngine } from '../../engine';
import { loadApi } from '../../lib/proto';
import type { Logger } from '../../lib/logger';
import type { GrpcListenerSettings } from '../../settings';
import { STAT, type Counter, type StatsStore, type Timer } from '../../stats';
import { toEdgeError } from '../errors';
import type { HealthState } from '../health';
import { requestFromWire, responseToWire } from '../wire/convert';
import type { WireRequest, WireResponse } from '../wire/messages';

const RLS_PROTO = 'envoy/service/ratelimit/v3/rls.proto';
const HEALTH_PROTO = 'grpc/health/v1/health.proto';

/** The service names the health service answers for; "" is the whole server. */
const HEALTH_SERVICES = new Set(['', 'ratelimit', 'envoy.service.ratelimit.v3.RateLimitService']);

interface HealthRequest {
  service?: string;
}
interface HealthResponse {
  status: 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';
}

function serviceDefinition(root: grpc.GrpcObject, path: string): grpc.ServiceDefinition {
  let node: unknown = root;
  for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
  const service = (node as { service?: grpc.ServiceDefinition } | undefined)?.service;
  if (service === undefined) throw new Error(`service ${path} is not in the loaded protos`);
  return service;
}

export interface GrpcServerOptions {
  readonly settings: GrpcListenerSettings;
  readonly engine: RateLimitEngine;
  readonly health: HealthState;
  readonly stats: StatsStore;
  readonly logger: Logger;
}

/** The listen address grpc-js binds for the settings. */
export function grpcAddress(settings: GrpcListenerSettings): string {
  if (settings.uds !== undefined) return `unix:${settings.uds}`;
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return `${host}:${settings.port}`;
}

export class RateLimitGrpcServer {
  private readonly server: grpc.Server;
  private readonly watchers = new Set<grpc.ServerWritableStream<HealthRequest, HealthResponse>>();
  private boundPort = 0;
  private readonly totalRequests: Counter;
  private readonly responseTime: Timer;

  constructor(private readonly options: GrpcServerOptions) {
    const { settings } = options;
    this.totalRequests = options.stats.counter(STAT.totalRequests('ShouldRateLimit'));
    this.responseTime = options.stats.timer(STAT.responseTime('ShouldRateLimit'));
    this.server = new grpc.Server({
      'grpc.max_connection_age_ms': settings.maxConnectionAgeMs,
      'grpc.max_connection_age_grace_ms': settings.maxConnectionAgeGraceMs,
    });
    const root = loadApi([RLS_PROTO, HEALTH_PROTO]);
    this.server.addService(serviceDefinition(root, 'envoy.service.ratelimit.v3.RateLimitService'), {
      ShouldRateLimit: this.shouldRateLimit,
    });
    this.server.addService(serviceDefinition(root, 'grpc.health.v1.Health'), {
      Check: this.check,
      Watch: this.watch,
    });
    options.health.onChange(() => {
      for (const call of this.watchers) call.write(this.healthOf(call.request.service ?? ''));
    });
  }

  private readonly shouldRateLimit = (
    call: grpc.ServerUnaryCall<WireRequest, WireResponse>,
    callback: grpc.sendUnaryData<WireResponse>,
  ): void => {
    const started = process.hrtime.bigint();
    this.totalRequests.inc();
    const finish = (): void => {
      this.responseTime.record(Number(process.hrtime.bigint() - started) / 1e6);
    };
    let request;
    try {
      request = requestFromWire(call.request);
    } catch (err: unknown) {
      const edge = toEdgeError(err);
      finish();
      callback({ code: edge.grpcCode, details: edge.message });
      return;
    }
    this.options.engine.shouldRateLimit(request).then(
      (response) => {
        finish();
        callback(null, responseToWire(response));
      },
      (err: unknown) => {
        const edge = toEdgeError(err);
        if (edge.kind !== 'request') {
          this.options.logger.warn('rate limit request failed', {
            error: describeError(err),
          });
        }
        finish();
        callback({ code: edge.grpcCode, details: edge.message });
      },
    );
  };

  private healthOf(service: string): HealthResponse {
    if (!HEALTH_SERVICES.has(service)) return { status: 'SERVICE_UNKNOWN' };
    return { status: this.options.health.isHealthy() ? 'SERVING' : 'NOT_SERVING' };
  }

  private readonly check = (
    call: grpc.ServerUnaryCall<HealthRequest, HealthResponse>,
    callback: grpc.sendUnaryData<HealthResponse>,
  ): void => {
    const service = call.request.service ?? '';
    if (!HEALTH_SERVICES.has(service)) {
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service ${service}` });
      return;
    }
    callback(null, this.healthOf(service));
  };

  private readonly watch = (
    call: grpc.ServerWritableStream<HealthRequest, HealthResponse>,
  ): void => {
    this.watchers.add(call);
    call.write(this.healthOf(call.request.service ?? ''));
    call.on('cancelled', () => this.watchers.delete(call));
    call.on('close', () => this.watchers.delete(call));
  };

  /** Binds the listener; resolves with the bound TCP port (0 for a unix socket). */
  async listen(): Promise<number> {
    const address = grpcAddress(this.options.settings);
    this.boundPort = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err !== null) reject(new Error(`cannot listen for gRPC on ${address}: ${err.message}`));
        else resolve(port);
      });
    });
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  /**
   * Stops taking new calls and waits for in-flight ones up to `graceMs`, then cuts the rest.
   */
  async shutdown(graceMs: number): Promise<void> {
    for (const call of this.watchers) call.end();
    this.watchers.clear();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
