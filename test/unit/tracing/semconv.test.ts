// The RPC convention mode read from OTEL_SEMCONV_STABILITY_OPT_IN, and each mode's attributes.
import {
  isServerFault,
  RLQS,
  rpcEndAttributes,
  rpcStartAttributes,
  semconvMode,
} from '../../../src/tracing/semconv';

it.each([
  [[], 'stable'],
  [['http'], 'stable'],
  [['rpc/old'], 'old'],
  [['http/dup', ' RPC/OLD '], 'old'],
  [['rpc/dup'], 'dup'],
  // OpenTelemetry: dup wins when both are given.
  [['rpc/old', 'rpc/dup'], 'dup'],
])('%j reads as %s', (optIn, mode) => {
  expect(semconvMode(optIn)).toBe(mode);
});

it('names the method fully qualified except in the old mode', () => {
  const full = 'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
  expect(rpcStartAttributes('stable')).toEqual({ 'rpc.system.name': 'grpc', 'rpc.method': full });
  expect(rpcStartAttributes('old')).toEqual({
    'rpc.system': 'grpc',
    'rpc.service': 'envoy.service.ratelimit.v3.RateLimitService',
    'rpc.method': 'ShouldRateLimit',
  });
  expect(rpcStartAttributes('dup')).toEqual({
    'rpc.system.name': 'grpc',
    'rpc.system': 'grpc',
    'rpc.service': 'envoy.service.ratelimit.v3.RateLimitService',
    'rpc.method': full,
  });
  const rlqs = 'envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';
  expect(rpcStartAttributes('stable', RLQS)).toEqual({
    'rpc.system.name': 'grpc',
    'rpc.method': rlqs,
  });
  expect(rpcStartAttributes('old', RLQS)).toMatchObject({ 'rpc.method': 'StreamRateLimitQuotas' });
  expect(rpcEndAttributes('stable', 'OK')).toEqual({ 'rpc.response.status_code': 'OK' });
  expect(rpcEndAttributes('old', 'OK')).toEqual({});
});

it('counts as the server fault what the gRPC and HTTP server conventions do', () => {
  expect(isServerFault('UNAVAILABLE', undefined)).toBe(true);
  expect(isServerFault('INVALID_ARGUMENT', undefined)).toBe(false);
  expect(isServerFault('OK', undefined)).toBe(false);
  expect(isServerFault('INVALID_ARGUMENT', 400)).toBe(false);
  expect(isServerFault('UNAVAILABLE', 500)).toBe(true);
});
