// Span attributes of the RPC semantic conventions, in the mode OTEL_SEMCONV_STABILITY_OPT_IN picks.
import type { Attributes } from '@opentelemetry/api';
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';

// Names of the older RPC conventions, which the package exports only from its incubating entry
// (not reachable with this project's module resolution); OpenTelemetry advises copying them.
const ATTR_RPC_SYSTEM = 'rpc.system';
const ATTR_RPC_SERVICE = 'rpc.service';
const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';

/**
 * `stable` (the default): rpc.system.name, fully qualified rpc.method, string
 * rpc.response.status_code. `rpc/old`: rpc.system, rpc.service, the short rpc.method.
 * `rpc/dup`: both, rpc.method fully qualified. The integer rpc.grpc.status_code is never set.
 */
export type SemconvMode = 'stable' | 'old' | 'dup';

/** The mode from the comma list; tokens for other conventions (http, db...) are not ours. */
export function semconvMode(optIn: readonly string[]): SemconvMode {
  const tokens = new Set(optIn.map((t) => t.trim().toLowerCase()));
  if (tokens.has('rpc/dup')) return 'dup';
  if (tokens.has('rpc/old')) return 'old';
  return 'stable';
}

export const RLS_SERVICE = 'envoy.service.ratelimit.v3.RateLimitService';
export const RLS_METHOD = 'ShouldRateLimit';
/** The span name the RPC conventions give a call: `<service>/<method>`. */
export const RLS_FULL_METHOD = `${RLS_SERVICE}/${RLS_METHOD}`;

/** A gRPC method as the RPC conventions name it. */
export interface RpcMethod {
  readonly service: string;
  readonly method: string;
}

export const RLS: RpcMethod = { service: RLS_SERVICE, method: RLS_METHOD };
export const RLQS: RpcMethod = {
  service: 'envoy.service.rate_limit_quota.v3.RateLimitQuotaService',
  method: 'StreamRateLimitQuotas',
};

/** The span name of a method's call: `<service>/<method>`. */
export function fullMethod({ service, method }: RpcMethod): string {
  return `${service}/${method}`;
}

/** The attributes known when a call of `rpc` (ShouldRateLimit unless said) starts. */
export function rpcStartAttributes(mode: SemconvMode, rpc: RpcMethod = RLS): Attributes {
  switch (mode) {
    case 'stable':
      return { [ATTR_RPC_SYSTEM_NAME]: 'grpc', [ATTR_RPC_METHOD]: fullMethod(rpc) };
    case 'old':
      return {
        [ATTR_RPC_SYSTEM]: 'grpc',
        [ATTR_RPC_SERVICE]: rpc.service,
        [ATTR_RPC_METHOD]: rpc.method,
      };
    case 'dup':
      return {
        [ATTR_RPC_SYSTEM_NAME]: 'grpc',
        [ATTR_RPC_SYSTEM]: 'grpc',
        [ATTR_RPC_SERVICE]: rpc.service,
        [ATTR_RPC_METHOD]: fullMethod(rpc),
      };
  }
}

/** The attributes of the answer: the status name, except in the old mode, which had only the integer. */
export function rpcEndAttributes(mode: SemconvMode, grpcStatus: string): Attributes {
  return mode === 'old' ? {} : { [ATTR_RPC_RESPONSE_STATUS_CODE]: grpcStatus };
}

/** gRPC statuses a server span counts as its own failure; the rest are the caller's doing. */
const SERVER_FAULTS: ReadonlySet<string> = new Set([
  'UNKNOWN',
  'DEADLINE_EXCEEDED',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
]);

/** Whether the span's status is ERROR, as the gRPC and HTTP server conventions say. */
export function isServerFault(grpcStatus: string, httpStatus: number | undefined): boolean {
  if (httpStatus !== undefined) return httpStatus >= 500;
  return SERVER_FAULTS.has(grpcStatus);
}
