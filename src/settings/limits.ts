// Limits section: how large a request may be and how long a connection may dawdle, so that no
// client can make the service hoard memory or hold a connection open for nothing.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { duration, int } from './fields';
import { group, type Values } from './section';
import type { ConnectionLimits, LimitsSettings, RequestLimits } from './types';

/**
 * The defaults are far above what Envoy sends (a handful of descriptors of a handful of short
 * entries, well under a kilobyte), so that they refuse nothing real while bounding what one
 * request or one connection can cost. docs/reliability.md lists them with what each refuses.
 */
export const LIMITS = group('', {
  MAX_DESCRIPTORS_PER_REQUEST: int(256, 1),
  MAX_ENTRIES_PER_DESCRIPTOR: int(64, 1),
  MAX_DESCRIPTOR_KEY_BYTES: int(1024, 1),
  MAX_DESCRIPTOR_VALUE_BYTES: int(8192, 1),
  MAX_REQUEST_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  GRPC_MAX_CONCURRENT_STREAMS: int(1000, 1, 2 ** 31 - 1),
  // Bytes of unfinished gRPC requests (header blocks and bodies) held across connections.
  GRPC_MAX_BUFFERED_BYTES: int(64 * 1024 * 1024, 1024 * 1024, 2 ** 40),
  // Unfinished gRPC requests holding bytes, across connections. Each may cost a memory mapping
  // or two, and the kernel allows about 65,000 (vm.max_map_count): hence the most.
  GRPC_MAX_BUFFERED_REQUESTS: int(10_000, 32, 20_000),
  HEADER_TIMEOUT: duration('10s'),
  // A streaming call's message, from its first byte to its last.
  MESSAGE_TIMEOUT: duration('10s'),
  // An RLQS stream's first report, from the stream's opening: Envoy sends it at once.
  RLQS_FIRST_MESSAGE_TIMEOUT: duration('10s'),
  IDLE_TIMEOUT: duration('5m'),
  // Client connections of every listener together, and from one peer address; sized from what
  // an idle connection costs (docs/reliability.md, "Connections").
  MAX_CONNECTIONS: int(20_000, 1, 1_000_000),
  MAX_CONNECTIONS_PER_PEER: int(2_000, 1, 1_000_000),
  // Bytes written to one connection and not yet taken by its client (its socket's queue).
  GRPC_MAX_UNSENT_BYTES_PER_CONNECTION: int(4 * 1024 * 1024, 64 * 1024, 2 ** 40),
  // The same, all connections together; one holding more than 1/32 of it is cut first.
  GRPC_MAX_UNSENT_BYTES: int(64 * 1024 * 1024, 1024 * 1024, 2 ** 40),
  // How long a connection may stay past its unsent bound without draining before it is cut.
  GRPC_UNSENT_TIMEOUT: duration('20s'),
});

export function limitsSettings(
  l: Values<typeof LIMITS>,
  problems: SettingsProblem[],
): LimitsSettings {
  // 0 would turn a timeout off, which is what it exists to prevent.
  for (const name of [
    'HEADER_TIMEOUT',
    'MESSAGE_TIMEOUT',
    'RLQS_FIRST_MESSAGE_TIMEOUT',
    'IDLE_TIMEOUT',
    'GRPC_UNSENT_TIMEOUT',
  ] as const) {
    if (l[name] <= 0)
      problems.push({
        setting: name,
        message: 'must be above 0; accepted: a duration such as 10s',
      });
  }
  // One connection may hold a thirty-second of the total, and at least a request of the largest
  // size: that must stay a quarter of the total at most.
  if (l.GRPC_MAX_BUFFERED_BYTES < 4 * l.MAX_REQUEST_BYTES)
    problems.push({
      setting: 'GRPC_MAX_BUFFERED_BYTES',
      message: `must be at least 4 × MAX_REQUEST_BYTES (${String(4 * l.MAX_REQUEST_BYTES)}); accepted: a byte count`,
    });
  return deepFreeze({
    request: {
      maxDescriptors: l.MAX_DESCRIPTORS_PER_REQUEST,
      maxEntries: l.MAX_ENTRIES_PER_DESCRIPTOR,
      maxKeyBytes: l.MAX_DESCRIPTOR_KEY_BYTES,
      maxValueBytes: l.MAX_DESCRIPTOR_VALUE_BYTES,
      maxRequestBytes: l.MAX_REQUEST_BYTES,
    },
    connection: {
      maxConcurrentStreams: l.GRPC_MAX_CONCURRENT_STREAMS,
      maxBufferedBytes: l.GRPC_MAX_BUFFERED_BYTES,
      maxBufferedRequests: l.GRPC_MAX_BUFFERED_REQUESTS,
      headerTimeoutMs: l.HEADER_TIMEOUT,
      messageTimeoutMs: l.MESSAGE_TIMEOUT,
      firstMessageTimeoutMs: l.RLQS_FIRST_MESSAGE_TIMEOUT,
      idleTimeoutMs: l.IDLE_TIMEOUT,
      maxConnections: l.MAX_CONNECTIONS,
      maxConnectionsPerPeer: Math.min(l.MAX_CONNECTIONS_PER_PEER, l.MAX_CONNECTIONS),
      maxUnsentBytesPerConnection: l.GRPC_MAX_UNSENT_BYTES_PER_CONNECTION,
      maxUnsentBytes: l.GRPC_MAX_UNSENT_BYTES,
      unsentTimeoutMs: l.GRPC_UNSENT_TIMEOUT,
    },
  });
}

/** The request limits of the defaults, for callers without settings (tools, tests). */
export const DEFAULT_REQUEST_LIMITS: RequestLimits = Object.freeze({
  maxDescriptors: LIMITS.fields.MAX_DESCRIPTORS_PER_REQUEST.defaultValue,
  maxEntries: LIMITS.fields.MAX_ENTRIES_PER_DESCRIPTOR.defaultValue,
  maxKeyBytes: LIMITS.fields.MAX_DESCRIPTOR_KEY_BYTES.defaultValue,
  maxValueBytes: LIMITS.fields.MAX_DESCRIPTOR_VALUE_BYTES.defaultValue,
  maxRequestBytes: LIMITS.fields.MAX_REQUEST_BYTES.defaultValue,
});

/** The connection limits of the defaults, for a listener opened without settings. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = Object.freeze({
  maxConcurrentStreams: LIMITS.fields.GRPC_MAX_CONCURRENT_STREAMS.defaultValue,
  maxBufferedBytes: LIMITS.fields.GRPC_MAX_BUFFERED_BYTES.defaultValue,
  maxBufferedRequests: LIMITS.fields.GRPC_MAX_BUFFERED_REQUESTS.defaultValue,
  headerTimeoutMs: LIMITS.fields.HEADER_TIMEOUT.defaultValue,
  messageTimeoutMs: LIMITS.fields.MESSAGE_TIMEOUT.defaultValue,
  firstMessageTimeoutMs: LIMITS.fields.RLQS_FIRST_MESSAGE_TIMEOUT.defaultValue,
  idleTimeoutMs: LIMITS.fields.IDLE_TIMEOUT.defaultValue,
  maxConnections: LIMITS.fields.MAX_CONNECTIONS.defaultValue,
  maxConnectionsPerPeer: LIMITS.fields.MAX_CONNECTIONS_PER_PEER.defaultValue,
  maxUnsentBytesPerConnection: LIMITS.fields.GRPC_MAX_UNSENT_BYTES_PER_CONNECTION.defaultValue,
  maxUnsentBytes: LIMITS.fields.GRPC_MAX_UNSENT_BYTES.defaultValue,
  unsentTimeoutMs: LIMITS.fields.GRPC_UNSENT_TIMEOUT.defaultValue,
});
