// xDS section: the management server, the node, TLS to it, and the client's backoff.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { bool, duration, float, int, map, secret, str } from './fields';
import { group, optional, type Values } from './section';
import type { ClientTlsSettings, XdsSourceSettings } from './types';

export const XDS = group('', {
  CONFIG_GRPC_XDS_NODE_ID: str('default'),
  CONFIG_GRPC_XDS_NODE_METADATA: map(true),
  CONFIG_GRPC_XDS_SERVER_URL: str('localhost:18000'),
  CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: duration('3s'),
  // Headers to the management server often carry a token.
  CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: secret(map()),
  CONFIG_GRPC_XDS_SERVER_USE_TLS: bool(false),
  CONFIG_GRPC_XDS_CLIENT_TLS_CERT: str(),
  CONFIG_GRPC_XDS_CLIENT_TLS_KEY: str(),
  CONFIG_GRPC_XDS_SERVER_TLS_CACERT: str(),
  CONFIG_GRPC_XDS_SERVER_TLS_SAN: str(),
  XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: duration('10s'),
  XDS_CLIENT_BACKOFF_MAX_INTERVAL: duration('60s'),
  XDS_CLIENT_BACKOFF_RANDOM_FACTOR: float(0.5, 0),
  XDS_CLIENT_BACKOFF_JITTER: bool(true),
  XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: int(0),
});

function xdsTls(x: Values<typeof XDS>, problems: SettingsProblem[]): ClientTlsSettings | undefined {
  if (!x.CONFIG_GRPC_XDS_SERVER_USE_TLS) return undefined;
  if ((x.CONFIG_GRPC_XDS_CLIENT_TLS_CERT === '') !== (x.CONFIG_GRPC_XDS_CLIENT_TLS_KEY === '')) {
    problems.push({
      setting: 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT',
      message:
        'CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together; set both or neither',
    });
  }
  return {
    certFile: optional(x.CONFIG_GRPC_XDS_CLIENT_TLS_CERT),
    keyFile: optional(x.CONFIG_GRPC_XDS_CLIENT_TLS_KEY),
    caFile: optional(x.CONFIG_GRPC_XDS_SERVER_TLS_CACERT),
    serverName: optional(x.CONFIG_GRPC_XDS_SERVER_TLS_SAN),
    skipHostnameVerification: false,
  };
}

/** The xDS configuration source; called only when CONFIG_TYPE chooses it. */
export function xdsSourceSettings(
  x: Values<typeof XDS>,
  problems: SettingsProblem[],
): XdsSourceSettings {
  return deepFreeze({
    type: 'GRPC_XDS_SOTW',
    nodeId: x.CONFIG_GRPC_XDS_NODE_ID,
    nodeMetadata: x.CONFIG_GRPC_XDS_NODE_METADATA,
    serverUrl: x.CONFIG_GRPC_XDS_SERVER_URL,
    connectRetryIntervalMs: x.CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL,
    additionalHeaders: x.CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS,
    tls: xdsTls(x, problems),
    backoff: {
      initialIntervalMs: x.XDS_CLIENT_BACKOFF_INITIAL_INTERVAL,
      maxIntervalMs: x.XDS_CLIENT_BACKOFF_MAX_INTERVAL,
      randomFactor: x.XDS_CLIENT_BACKOFF_RANDOM_FACTOR,
      jitter: x.XDS_CLIENT_BACKOFF_JITTER,
    },
    maxMessageSizeBytes:
      x.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES > 0 ? x.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES : undefined,
  });
}
