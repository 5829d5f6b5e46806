// Loads the project's own .proto files (api/): services through @grpc/proto-loader, one set of
// options everywhere, and single message types through protobufjs.
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

/** The api/ folder, found from src/lib (tests) or dist/src/lib (the build). */
export const API_DIR: string =
  [
    path.resolve(__dirname, '..', '..', 'api'),
    path.resolve(__dirname, '..', '..', '..', 'api'),
  ].find((dir) => existsSync(path.join(dir, 'envoy'))) ??
  path.resolve(__dirname, '..', '..', 'api');

/** Every .proto file of api/, relative to API_DIR. */
export const API_FILES: readonly string[] = Object.freeze([
  'envoy/service/ratelimit/v3/rls.proto',
  'envoy/extensions/common/ratelimit/v3/ratelimit.proto',
  'envoy/type/v3/ratelimit_unit.proto',
  'envoy/type/v3/semantic_version.proto',
  'envoy/config/core/v3/base.proto',
  'envoy/service/discovery/v3/discovery.proto',
  'envoy/service/discovery/v3/ads.proto',
  'google/rpc/status.proto',
  'ratelimit/config/ratelimit/v3/rls_conf.proto',
  'ratelimit/service/ratelimit/v3/rls_conf_ds.proto',
  'ratelimit_ts/quota/v1/quota_rules.proto',
  'grpc/health/v1/health.proto',
  'envoy/service/rate_limit_quota/v3/rlqs.proto',
  'envoy/type/v3/ratelimit_strategy.proto',
  'envoy/type/v3/token_bucket.proto',
]);

/**
 * camelCase fields, 64-bit numbers as JS numbers, enums as names, absent fields left out
 * (so a set-but-zero wrapper is told apart from an unset one), oneofs named.
 */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = Object.freeze({
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: false,
  oneofs: true,
  includeDirs: [API_DIR],
});

/** Loads the given files (relative to API_DIR) into a package definition. */
export function loadPackageDefinition(files: readonly string[]): protoLoader.PackageDefinition {
  return protoLoader.loadSync([...files], PROTO_LOADER_OPTIONS);
}

/** Loads the given files as grpc-js service constructors and message types. */
export function loadApi(files: readonly string[]): grpc.GrpcObject {
  return grpc.loadPackageDefinition(loadPackageDefinition(files));
}

/** The xDS resource this service subscribes to and the simulator serves. */
export const RATE_LIMIT_CONFIG = Object.freeze({
  file: 'ratelimit/config/ratelimit/v3/rls_conf.proto',
  name: 'ratelimit.config.ratelimit.v3.RateLimitConfig',
  typeUrl: 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig',
});

/** This project's own xDS resource of quota rules, subscribed to on the same ADS stream. */
export const QUOTA_RULES = Object.freeze({
  file: 'ratelimit_ts/quota/v1/quota_rules.proto',
  name: 'ratelimit_ts.quota.v1.QuotaRules',
  typeUrl: 'type.googleapis.com/ratelimit_ts.quota.v1.QuotaRules',
});

const messageTypes = new Map<string, protobuf.Type>();

/**
 * One message type of api/ (`file` relative to API_DIR, `name` fully qualified), loaded once,
 * for the bytes gRPC does not decode itself: the value of an Any. Google's well-known types
 * come from protobufjs's own copies.
 */
export function messageType(file: string, name: string): protobuf.Type {
  let type = messageTypes.get(name);
  if (type === undefined) {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) =>
      target.startsWith('google/protobuf/') ? target : path.join(API_DIR, target);
    root.loadSync(file, { keepCase: false });
    root.resolveAll();
    type = root.lookupType(name);
    messageTypes.set(name, type);
  }
  return type;
}
