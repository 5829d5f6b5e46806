// Every setting the service reads, each named once, grouped by concern; SPEC.md is the reference.
import { LOG_LEVELS } from '../lib/logger';
import type { FieldSpec } from './fields';
import { bool, duration, float, int, list, map, oneOf, port, str } from './fields';

/** A group of settings whose names share a prefix. */
export interface Group<F extends Record<string, FieldSpec<unknown>>> {
  readonly prefix: string;
  readonly fields: F;
}

function group<F extends Record<string, FieldSpec<unknown>>>(prefix: string, fields: F): Group<F> {
  return { prefix, fields };
}

const LOG_LEVEL_NAMES = [...LOG_LEVELS, 'warn'] as const;

/** Options of one Redis instance; the per-second instance has the same set. */
function redisInstance(defaultUrl: string) {
  return {
    SOCKET_TYPE: oneOf('', ['', 'tcp', 'unix'], { tcp4: 'tcp', tcp6: 'tcp' }),
    TYPE: oneOf('single', ['single', 'sentinel', 'cluster']),
    URL: str(defaultUrl),
    POOL_SIZE: int(10, 1),
    AUTH: str(),
    AUTH_FILE: str(),
    SENTINEL_AUTH: str(),
    TLS: bool(false),
    TLS_CLIENT_CERT: str(),
    TLS_CLIENT_KEY: str(),
    TLS_CACERT: str(),
    TLS_SKIP_HOSTNAME_VERIFICATION: bool(false),
    PIPELINE_WINDOW: duration('0'),
    PIPELINE_LIMIT: int(0),
    CLUSTER_PIPELINE_PARALLELISM: int(1),
    TIMEOUT: duration('10s'),
    POOL_ON_EMPTY_BEHAVIOR: oneOf('CREATE', ['CREATE', 'ERROR', 'WAIT']),
    POOL_ON_EMPTY_WAIT_DURATION: duration('1s'),
    CLOSE_CONNECTION_ON_READONLY_ERROR: bool(false),
    AWS_IAM_AUTH: bool(false),
    AWS_IAM_CACHE_NAME: str(),
    AWS_IAM_USER_ID: str(),
    AWS_IAM_SERVERLESS: bool(false),
    AWS_IAM_REGION: str(),
  };
}

/** The whole schema. Names are the reference service's; neutral aliases are derived in aliases.ts. */
export const SCHEMA = {
  server: group('', {
    HOST: str('0.0.0.0'),
    PORT: port(8080),
    DEBUG_HOST: str('0.0.0.0'),
    DEBUG_PORT: port(6070),
    GRPC_HOST: str('0.0.0.0'),
    GRPC_PORT: port(8081),
    GRPC_UDS: str(),
    WORKERS: int(1, 1, 256),
    GRPC_MAX_CONNECTION_AGE: duration('24h'),
    GRPC_MAX_CONNECTION_AGE_GRACE: duration('1h'),
    GRPC_SERVER_USE_TLS: bool(false),
    GRPC_SERVER_TLS_CERT: str(),
    GRPC_SERVER_TLS_KEY: str(),
    GRPC_CLIENT_TLS_CACERT: str(),
    GRPC_CLIENT_TLS_SAN: str(),
    LOG_LEVEL: oneOf('warning', LOG_LEVEL_NAMES),
    LOG_FORMAT: oneOf('text', ['text', 'json']),
    HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: bool(false),
  }),
  config: group('', {
    CONFIG_TYPE: oneOf('FILE', ['FILE', 'GRPC_XDS_SOTW']),
    FORCE_START_WITHOUT_INITIAL_CONFIG: bool(false),
    RUNTIME_ROOT: str('/srv/runtime_data/current'),
    RUNTIME_SUBDIRECTORY: str(),
    RUNTIME_APPDIRECTORY: str('config'),
    RUNTIME_IGNOREDOTFILES: bool(false),
    RUNTIME_WATCH_ROOT: bool(true),
    MERGE_DOMAIN_CONFIG: bool(false),
  }),
  xds: group('', {
    CONFIG_GRPC_XDS_NODE_ID: str('default'),
    CONFIG_GRPC_XDS_NODE_METADATA: map(true),
    CONFIG_GRPC_XDS_SERVER_URL: str('localhost:18000'),
    CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: duration('3s'),
    CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: map(),
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
  }),
  stats: group('', {
    USE_STATSD: bool(true),
    STATSD_HOST: str('localhost'),
    STATSD_PORT: port(8125),
    STATSD_PROTOCOL: oneOf('udp', ['udp', 'tcp']),
    STATS_MAX_RULE_KEYS: int(10000, 1),
    EXTRA_TAGS: map(),
    STATS_FLUSH_INTERVAL: duration('10s'),
    DISABLE_STATS: bool(false),
    SANITIZE_DESCRIPTOR_METRIC_DOTS: bool(false),
    USE_DOG_STATSD: bool(false),
    USE_DOG_STATSD_MOGRIFIERS: list(),
    USE_PROMETHEUS: bool(false),
    PROMETHEUS_ADDR: str(':9090'),
    PROMETHEUS_PATH: str('/metrics'),
    PROMETHEUS_MAPPER_YAML: str(),
    PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: bool(false),
  }),
  limiter: group('', {
    BACKEND_TYPE: oneOf('redis', ['redis', 'memcache', 'memory'], {
      altcache: 'memcache',
      kvstore: 'redis',
    }),
    EXPIRATION_JITTER_MAX_SECONDS: int(300),
    LOCAL_CACHE_SIZE_IN_BYTES: int(0),
    NEAR_LIMIT_RATIO: float(0.8, 0, 1),
    CACHE_KEY_PREFIX: str(),
    STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: bool(false),
    USE_CALENDAR_MONTH_RATE_LIMIT: bool(false),
    SHADOW_MODE: bool(false),
    QUOTA_MODE: bool(false),
    RESPONSE_DYNAMIC_METADATA: bool(false),
    LIMIT_RESPONSE_HEADERS_ENABLED: bool(false),
    LIMIT_LIMIT_HEADER: str('RateLimit-Limit'),
    LIMIT_REMAINING_HEADER: str('RateLimit-Remaining'),
    LIMIT_RESET_HEADER: str('RateLimit-Reset'),
    LIMIT_PER_UNIT_HEADERS_ENABLED: bool(false),
    LIMIT_REQUEST_HEADERS_ENABLED: bool(false),
    LIMIT_REQUEST_LIMIT_HEADER: str('RateLimit-Limit'),
    LIMIT_REQUEST_REMAINING_HEADER: str('RateLimit-Remaining'),
    LIMIT_REQUEST_RESET_HEADER: str('RateLimit-Reset'),
  }),
  redisCommon: group('REDIS_', {
    PERSECOND: bool(false),
    HEALTH_CHECK_ACTIVE_CONNECTION: bool(false),
    STARTUP_INITIAL_INTERVAL: duration('1s'),
    STARTUP_MAX_INTERVAL: duration('30s'),
    STARTUP_MAX_ELAPSED_TIME: duration('0'),
  }),
  redis: group('REDIS_', redisInstance('localhost:6379')),
  redisPerSecond: group('REDIS_PERSECOND_', redisInstance('')),
  memcache: group('MEMCACHE_', {
    HOST_PORT: list(),
    SRV: str(),
    SRV_REFRESH: duration('0'),
    MAX_IDLE_CONNS: int(2),
    // Not a setting of the reference, whose client waits 500 ms: the same default here.
    TIMEOUT: duration('500ms'),
    TLS: bool(false),
    TLS_CLIENT_CERT: str(),
    TLS_CLIENT_KEY: str(),
    TLS_CACERT: str(),
    TLS_SKIP_HOSTNAME_VERIFICATION: bool(false),
  }),
  tracing: group('', {
    TRACING_ENABLED: bool(false),
    TRACING_EXPORTER_PROTOCOL: oneOf('http', ['http', 'grpc']),
    TRACING_SERVICE_NAME: str('RateLimit'),
    TRACING_SERVICE_NAMESPACE: str(),
    TRACING_SERVICE_INSTANCE_ID: str(),
    TRACING_SAMPLING_RATE: float(1, 0, 1),
    // OpenTelemetry's comma list, often set for a whole pod: tokens for other conventions
    // (http, http/dup, ...) are someone else's and pass through.
    OTEL_SEMCONV_STABILITY_OPT_IN: list(),
  }),
} as const;

export type Schema = typeof SCHEMA;
type ValueOf<S> = S extends FieldSpec<infer T> ? T : never;

/** The flat parsed values, group by group, under the field names of the schema. */
export type RawSettings = {
  readonly [G in keyof Schema]: {
    readonly [F in keyof Schema[G]['fields']]: ValueOf<Schema[G]['fields'][F]>;
  };
};

/** Every setting name the schema defines, in schema order. */
export function allSettingNames(): string[] {
  const names: string[] = [];
  for (const g of Object.values(SCHEMA) as Group<Record<string, FieldSpec<unknown>>>[]) {
    for (const field of Object.keys(g.fields)) names.push(g.prefix + field);
  }
  return names;
}
