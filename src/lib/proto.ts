// Loads the project's own .proto files (api/) with @grpc/proto-loader, one set of options everywhere.
import { existsSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

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
  'grpc/health/v1/health.proto',
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
