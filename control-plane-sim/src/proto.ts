// The simulator's view of api/: the ADS and RLS-config services, and RateLimitConfig encoding.
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** api/, from control-plane-sim/src (tests) or dist/control-plane-sim/src (the build). */
export const API_DIR: string =
  [
    path.resolve(__dirname, '..', '..', 'api'),
    path.resolve(__dirname, '..', '..', '..', 'api'),
  ].find((dir) => existsSync(path.join(dir, 'envoy'))) ??
  path.resolve(__dirname, '..', '..', 'api');

export const TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

export function loadServices(): { ads: grpc.ServiceDefinition; rlsConfig: grpc.ServiceDefinition } {
  const definition = protoLoader.loadSync(
    ['envoy/service/discovery/v3/ads.proto', 'ratelimit/service/ratelimit/v3/rls_conf_ds.proto'],
    {
      keepCase: false,
      longs: Number,
      enums: String,
      defaults: false,
      oneofs: true,
      includeDirs: [API_DIR],
    },
  );
  const root = grpc.loadPackageDefinition(definition) as unknown as {
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
