// The simulator's view of api/: the ADS and RLS-config services, and RateLimitConfig encoding.
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
// The same api/ folder and loader options as the service: both sides speak one definition.
import { API_DIR, loadApi } from '../../src/lib/proto';

export const TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

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

let configType: protobuf.Type | undefined;

/** Encodes a RateLimitConfig (camelCase fields) into the bytes of an Any's value. */
export function encodeConfig(config: Record<string, unknown>): Uint8Array {
  if (configType === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) =>
      target.startsWith('google/protobuf/') ? target : path.join(API_DIR, target);
    root.loadSync('ratelimit/config/ratelimit/v3/rls_conf.proto', { keepCase: false });
    root.resolveAll();
    configType = root.lookupType('ratelimit.config.ratelimit.v3.RateLimitConfig');
  }
  return configType.encode(configType.fromObject(config)).finish();
}
