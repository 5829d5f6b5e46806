// Server section: the listeners (HTTP, gRPC, debug and its decision ring), gRPC connection age
// and TLS, and WORKERS.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { bool, duration, int, oneOf, port, str } from './fields';
import { group, optional, type Values } from './section';
import type { GrpcServerTlsSettings, ServerSettings } from './types';

export const SERVER = group('', {
  HOST: str('0.0.0.0'),
  PORT: port(8080),
  DEBUG_HOST: str('0.0.0.0'),
  DEBUG_PORT: port(6070),
  DEBUG_PROFILING_ENABLED: bool(false),
  // Bounded: each kept decision holds a few references, so a million would be a few hundred MB.
  DEBUG_RECENT_DECISIONS: int(1000, 0, 100_000),
  GRPC_HOST: str('0.0.0.0'),
  GRPC_PORT: port(8081),
  GRPC_UDS: str(),
  WORKERS: int(1, 1, 256),
  GRPC_MAX_CONNECTION_AGE: duration('24h'),
  GRPC_MAX_CONNECTION_AGE_GRACE: duration('1h'),
  // `node` serves the same gRPC layer on node:http2: a fallback should a client and the
  // service's own HTTP/2 not get along, at about 4 times the CPU per call.
  GRPC_HTTP2: oneOf('own', ['own', 'node']),
  GRPC_SERVER_USE_TLS: bool(false),
  GRPC_SERVER_TLS_CERT: str(),
  GRPC_SERVER_TLS_KEY: str(),
  GRPC_CLIENT_TLS_CACERT: str(),
  GRPC_CLIENT_TLS_SAN: str(),
  GRPC_SERVER_TLS_CA_CERT: str(),
});

function grpcTls(
  s: Values<typeof SERVER>,
  problems: SettingsProblem[],
): GrpcServerTlsSettings | undefined {
  if (!s.GRPC_SERVER_USE_TLS) {
    // Files for mutual TLS on a plaintext listener would give a false sense of protection.
    for (const setting of ['GRPC_CLIENT_TLS_CACERT', 'GRPC_CLIENT_TLS_SAN'] as const) {
      if (s[setting] !== '')
        problems.push({
          setting,
          message: `${setting} is set but GRPC_SERVER_USE_TLS is false: the gRPC listener would accept plaintext from anyone. Set GRPC_SERVER_USE_TLS=true (with GRPC_SERVER_TLS_CERT and GRPC_SERVER_TLS_KEY) or unset ${setting}`,
        });
    }
    return undefined;
  }
  for (const setting of ['GRPC_SERVER_TLS_CERT', 'GRPC_SERVER_TLS_KEY'] as const) {
    if (s[setting] === '')
      problems.push({
        setting,
        message: `GRPC_SERVER_USE_TLS is true but ${setting} is not set: give the path of the ${setting === 'GRPC_SERVER_TLS_CERT' ? 'server certificate chain (PEM)' : 'server private key (PEM)'}`,
      });
  }
  if (s.GRPC_CLIENT_TLS_SAN !== '' && s.GRPC_CLIENT_TLS_CACERT === '') {
    problems.push({
      setting: 'GRPC_CLIENT_TLS_SAN',
      message:
        'GRPC_CLIENT_TLS_SAN is set but GRPC_CLIENT_TLS_CACERT is not: client certificates (and so their SANs) are asked for only with mutual TLS. Set GRPC_CLIENT_TLS_CACERT to the CA that signs the clients',
    });
  }
  return {
    certFile: s.GRPC_SERVER_TLS_CERT,
    keyFile: s.GRPC_SERVER_TLS_KEY,
    clientCaFile: optional(s.GRPC_CLIENT_TLS_CACERT),
    clientSan: optional(s.GRPC_CLIENT_TLS_SAN),
  };
}

/** The listeners' settings; `backendType` decides whether several workers can share counters. */
export function serverSettings(
  s: Values<typeof SERVER>,
  backendType: string,
  problems: SettingsProblem[],
): ServerSettings {
  if (s.WORKERS > 1 && backendType === 'memory') {
    problems.push({
      setting: 'WORKERS',
      message: `WORKERS is ${s.WORKERS} but BACKEND_TYPE is memory, whose counters live inside one process: each worker would count on its own. Use WORKERS=1 with the memory backend, or BACKEND_TYPE=redis`,
    });
  }
  return deepFreeze({
    workers: s.WORKERS,
    http: { host: s.HOST, port: s.PORT },
    debug: {
      host: s.DEBUG_HOST,
      port: s.DEBUG_PORT,
      isProfilingEnabled: s.DEBUG_PROFILING_ENABLED,
      recentDecisions: s.DEBUG_RECENT_DECISIONS,
    },
    grpc: {
      host: s.GRPC_HOST,
      port: s.GRPC_PORT,
      uds: optional(s.GRPC_UDS),
      maxConnectionAgeMs: s.GRPC_MAX_CONNECTION_AGE,
      maxConnectionAgeGraceMs: s.GRPC_MAX_CONNECTION_AGE_GRACE,
      http2: s.GRPC_HTTP2,
      tls: grpcTls(s, problems),
      ...(s.GRPC_SERVER_TLS_CA_CERT === ''
        ? {}
        : { ignoredServerCaFile: s.GRPC_SERVER_TLS_CA_CERT }),
    },
  });
}
