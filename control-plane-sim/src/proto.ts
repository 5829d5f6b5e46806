// The simulator's view of api/: the ADS and RLS-config services, and RateLimitConfig and
// QuotaRules encoding.
import type * as grpc from '@grpc/grpc-js';
// The same api/ folder and loaders as the service, from src/lib, which imports nothing of the
// service itself: both sides speak one definition, and the simulator stays independent.
import { loadApi, messageType, QUOTA_RULES, RATE_LIMIT_CONFIG } from '../../src/lib/proto';

export const TYPE_URL = RATE_LIMIT_CONFIG.typeUrl;
/** This project's own resource of quota rules, served beside RateLimitConfig on ADS. */
export const QUOTA_TYPE_URL = QUOTA_RULES.typeUrl;

export function loadServices(): { ads: grpc.ServiceDefinition; rlsConfig: grpc.ServiceDefinition } {
  const root = loadApi([
    'envoy/service/discovery/v3/ads.proto',
    'ratelimit/service/ratelimit/v3/rls_conf_ds.proto',
  ]) as unknown as {
    envoy: {
      service: {
        discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } };
      };
    };
    ratelimit: {
      service: {
        ratelimit: { v3: { RateLimitConfigDiscoveryService: { service: grpc.ServiceDefinition } } };
      };
    };
  };
  return {
    ads: root.envoy.service.discovery.v3.AggregatedDiscoveryService.service,
    rlsConfig: root.ratelimit.service.ratelimit.v3.RateLimitConfigDiscoveryService.service,
  };
}

/** Encodes a RateLimitConfig (camelCase fields) into the bytes of an Any's value. */
export function encodeConfig(config: Record<string, unknown>): Uint8Array {
  const type = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
  return type.encode(type.fromObject(config)).finish();
}

/** Encodes a QuotaRules (camelCase fields) into the bytes of an Any's value. */
export function encodeQuotaRules(rules: Record<string, unknown>): Uint8Array {
  const type = messageType(QUOTA_RULES.file, QUOTA_RULES.name);
  return type.encode(type.fromObject(rules)).finish();
}
