// Settings: defaults, real names and neutral aliases, parsing, refusals with exact messages.
import { loadSettings, allSettingNames, namesFor } from '../../../src/settings';
import { settingsProblems } from '../../helpers/settings';
import { list, map } from '../../../src/settings/fields';

const problems = settingsProblems;

describe('defaults', () => {
  const s = loadSettings({});

  it('match the reference service where the spec gives them', () => {
    expect(s.server.http).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(s.server.grpc.host).toBe('0.0.0.0');
    expect(s.server.grpc.port).toBe(8081);
    expect(s.server.debug).toEqual({
      host: '0.0.0.0',
      port: 6070,
      isProfilingEnabled: false,
      recentDecisions: 1000,
    });
    expect(s.server.grpc.maxConnectionAgeMs).toBe(24 * 3600 * 1000);
    expect(s.server.grpc.maxConnectionAgeGraceMs).toBe(3600 * 1000);
    expect(s.server.grpc.http2).toBe('own');
    expect(s.log).toEqual({ level: 'warning', format: 'text' });
    expect(s.config.source).toMatchObject({
      type: 'FILE',
      runtimeRoot: '/srv/runtime_data/current',
      runtimeAppDirectory: 'config',
      watchRoot: true,
      ignoreDotFiles: false,
    });
    expect(s.stats).toMatchObject({
      enabled: true,
      flushIntervalMs: 10_000,
      sinks: [{ type: 'statsd', host: 'localhost', port: 8125, protocol: 'udp' }],
      maxRuleKeys: 10000,
    });
    expect(s.limiter).toMatchObject({
      expirationJitterMaxSeconds: 300,
      localCacheSizeBytes: 0,
      nearLimitRatio: 0.8,
      cacheKeyPrefix: '',
      responseHeaders: {
        enabled: false,
        limit: 'RateLimit-Limit',
        remaining: 'RateLimit-Remaining',
        reset: 'RateLimit-Reset',
        perUnit: false,
      },
    });
    expect(s.backend).toMatchObject({
      type: 'redis',
      main: {
        socketType: 'tcp',
        url: 'localhost:6379',
        type: 'single',
        poolSize: 10,
        timeoutMs: 10_000,
        pipelineWindowMs: 0,
      },
      perSecond: undefined,
      startup: { initialIntervalMs: 1000, maxIntervalMs: 30_000, maxElapsedMs: 0 },
    });
  });

  it('are frozen all the way down', () => {
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.server.grpc)).toBe(true);
    expect(Object.isFrozen(s.backend)).toBe(true);
  });
});

describe('parsing', () => {
  it('reads Go durations', () => {
    const s = loadSettings({
      REDIS_PIPELINE_WINDOW: '150us',
      STATS_FLUSH_INTERVAL: '1m30s',
      REDIS_TIMEOUT: '2s',
    });
    expect(s.backend.type === 'redis' && s.backend.main.pipelineWindowMs).toBeCloseTo(0.15);
    expect(s.stats.flushIntervalMs).toBe(90_000);
    expect(s.backend.type === 'redis' && s.backend.main.timeoutMs).toBe(2000);
  });

  it('reads booleans as Go does', () => {
    for (const yes of ['1', 't', 'T', 'TRUE', 'true', 'True'])
      expect(loadSettings({ SHADOW_MODE: yes }).limiter.globalShadowMode).toBe(true);
    for (const no of ['0', 'f', 'F', 'FALSE', 'false', 'False'])
      expect(loadSettings({ SHADOW_MODE: no }).limiter.globalShadowMode).toBe(false);
  });

  it('reads k:v maps and lists as the reference does', () => {
    expect(map().parse('a:1,b:two:parts, c : 3')).toEqual({
      ok: true,
      value: { a: '1', b: 'two:parts', c: '3' },
    });
    expect(map().parse('a:1,broken').ok).toBe(false);
    expect(list().parse('x:1, y:2,,')).toEqual({ ok: true, value: ['x:1', 'y:2'] });
  });

  it('treats an empty value as unset', () => {
    expect(loadSettings({ PORT: '' }).server.http.port).toBe(8080);
  });

  it('reads LOG_LEVEL case-insensitively and maps warn to warning', () => {
    expect(loadSettings({ LOG_LEVEL: 'DEBUG' }).log.level).toBe('debug');
    expect(loadSettings({ LOG_LEVEL: 'warn' }).log.level).toBe('warning');
  });

  it('infers a unix socket from a path when REDIS_SOCKET_TYPE is unset', () => {
    const s = loadSettings({ REDIS_URL: '/var/run/redis.sock' });
    expect(s.backend.type === 'redis' && s.backend.main.socketType).toBe('unix');
  });

  it('parses REDIS_AUTH as password or user:password', () => {
    const a = loadSettings({ REDIS_AUTH: 'secret' });
    expect(a.backend.type === 'redis' && a.backend.main.auth).toEqual({
      kind: 'static',
      username: undefined,
      password: 'secret',
    });
    const b = loadSettings({ REDIS_AUTH: 'user:pa:ss' });
    expect(b.backend.type === 'redis' && b.backend.main.auth).toEqual({
      kind: 'static',
      username: 'user',
      password: 'pa:ss',
    });
  });

  it('enables the per-second instance', () => {
    const s = loadSettings({ REDIS_PERSECOND: 'true', REDIS_PERSECOND_URL: 'localhost:6380' });
    expect(s.backend.type === 'redis' && s.backend.perSecond?.url).toBe('localhost:6380');
  });
});

describe('aliases', () => {
  it('accepts the product-neutral spellings', () => {
    expect(namesFor('REDIS_URL')).toEqual(['REDIS_URL', 'KVSTORE_URL']);
    expect(namesFor('USE_STATSD')).toEqual(['USE_STATSD', 'USE_PUSHSTATS']);
    expect(namesFor('USE_DOG_STATSD_MOGRIFIERS')).toEqual([
      'USE_DOG_STATSD_MOGRIFIERS',
      'USE_TAGGEDPUSH_MOGRIFIERS',
      'DOG_STATSD_MOGRIFIERS',
      'TAGGEDPUSH_MOGRIFIERS',
    ]);
    expect(namesFor('MEMCACHE_SRV')).toEqual(['MEMCACHE_SRV', 'ALTCACHE_SRV']);
    const s = loadSettings({ KVSTORE_URL: 'h:1', USE_PUSHSTATS: 'false' });
    expect(s.backend.type === 'redis' && s.backend.main.url).toBe('h:1');
    expect(s.stats.sinks).toEqual([{ type: 'stdout' }]);
  });

  it('lets the real name win over the alias', () => {
    const s = loadSettings({ KVSTORE_URL: 'alias:1', REDIS_URL: 'real:2' });
    expect(s.backend.type === 'redis' && s.backend.main.url).toBe('real:2');
  });

  it('accepts BACKEND_TYPE altcache as memcache', () => {
    expect(loadSettings({ BACKEND_TYPE: 'altcache', ALTCACHE_HOST_PORT: 'h:1' }).backend).toEqual({
      type: 'memcache',
      hostPorts: ['h:1'],
      srv: undefined,
      srvRefreshMs: 0,
      maxIdleConns: 2,
      timeoutMs: 500,
      tls: undefined,
    });
  });

  it('serves gRPC on node:http2 with GRPC_HTTP2=node, in any case', () => {
    expect(loadSettings({ GRPC_HTTP2: 'node' }).server.grpc.http2).toBe('node');
    expect(loadSettings({ GRPC_HTTP2: 'Own' }).server.grpc.http2).toBe('own');
  });

  it('covers every setting of the spec', () => {
    const names = new Set(allSettingNames());
    for (const name of [
      'HOST',
      'PORT',
      'GRPC_HOST',
      'GRPC_PORT',
      'GRPC_UDS',
      'DEBUG_HOST',
      'DEBUG_PORT',
      'DEBUG_RECENT_DECISIONS',
      'LOG_LEVEL',
      'LOG_FORMAT',
      'CONFIG_TYPE',
      'FORCE_START_WITHOUT_INITIAL_CONFIG',
      'RUNTIME_ROOT',
      'RUNTIME_SUBDIRECTORY',
      'RUNTIME_APPDIRECTORY',
      'RUNTIME_IGNOREDOTFILES',
      'RUNTIME_WATCH_ROOT',
      'MERGE_DOMAIN_CONFIG',
      'XDS_CLIENT_BACKOFF_JITTER',
      'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL',
      'XDS_CLIENT_BACKOFF_MAX_INTERVAL',
      'XDS_CLIENT_BACKOFF_RANDOM_FACTOR',
      'XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES',
      'CONFIG_GRPC_XDS_NODE_ID',
      'CONFIG_GRPC_XDS_SERVER_URL',
      'CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL',
      'CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS',
      'CONFIG_GRPC_XDS_NODE_METADATA',
      'GRPC_MAX_CONNECTION_AGE',
      'GRPC_MAX_CONNECTION_AGE_GRACE',
      'HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED',
      'USE_STATSD',
      'STATSD_HOST',
      'STATSD_PORT',
      'STATS_FLUSH_INTERVAL',
      'DISABLE_STATS',
      'SANITIZE_DESCRIPTOR_METRIC_DOTS',
      'EXTRA_TAGS',
      'USE_DOG_STATSD',
      'USE_DOG_STATSD_MOGRIFIERS',
      'USE_PROMETHEUS',
      'PROMETHEUS_ADDR',
      'PROMETHEUS_PATH',
      'PROMETHEUS_MAPPER_YAML',
      'PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS',
      'BACKEND_TYPE',
      'REDIS_SOCKET_TYPE',
      'REDIS_URL',
      'REDIS_TYPE',
      'REDIS_POOL_SIZE',
      'REDIS_TIMEOUT',
      'REDIS_POOL_ON_EMPTY_BEHAVIOR',
      'REDIS_POOL_ON_EMPTY_WAIT_DURATION',
      'REDIS_PIPELINE_WINDOW',
      'REDIS_PIPELINE_LIMIT',
      'REDIS_CLUSTER_PIPELINE_PARALLELISM',
      'REDIS_HEALTH_CHECK_ACTIVE_CONNECTION',
      'REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR',
      'CACHE_KEY_PREFIX',
      'REDIS_PERSECOND',
      'REDIS_PERSECOND_URL',
      'REDIS_PERSECOND_SOCKET_TYPE',
      'MEMCACHE_HOST_PORT',
      'MEMCACHE_SRV',
      'MEMCACHE_SRV_REFRESH',
      'MEMCACHE_MAX_IDLE_CONNS',
      'MEMCACHE_TLS',
      'MEMCACHE_TLS_CLIENT_CERT',
      'MEMCACHE_TLS_CLIENT_KEY',
      'MEMCACHE_TLS_CACERT',
      'MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION',
      'LIMIT_RESPONSE_HEADERS_ENABLED',
      'LIMIT_LIMIT_HEADER',
      'LIMIT_REMAINING_HEADER',
      'LIMIT_RESET_HEADER',
      'LIMIT_PER_UNIT_HEADERS_ENABLED',
      'LIMIT_REQUEST_HEADERS_ENABLED',
      'LIMIT_REQUEST_LIMIT_HEADER',
      'LIMIT_REQUEST_REMAINING_HEADER',
      'LIMIT_REQUEST_RESET_HEADER',
      'TRACING_ENABLED',
      'TRACING_EXPORTER_PROTOCOL',
      'TRACING_SERVICE_NAME',
      'TRACING_SERVICE_NAMESPACE',
      'TRACING_SERVICE_INSTANCE_ID',
      'TRACING_SAMPLING_RATE',
      'OTEL_SEMCONV_STABILITY_OPT_IN',
      'HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED',
      'GRPC_SERVER_USE_TLS',
      'GRPC_SERVER_TLS_CERT',
      'GRPC_SERVER_TLS_KEY',
      'GRPC_CLIENT_TLS_CACERT',
      'GRPC_CLIENT_TLS_SAN',
      'CONFIG_GRPC_XDS_SERVER_USE_TLS',
      'CONFIG_GRPC_XDS_CLIENT_TLS_CERT',
      'CONFIG_GRPC_XDS_CLIENT_TLS_KEY',
      'CONFIG_GRPC_XDS_SERVER_TLS_CACERT',
      'CONFIG_GRPC_XDS_SERVER_TLS_SAN',
      'REDIS_TLS',
      'REDIS_TLS_CLIENT_CERT',
      'REDIS_TLS_CLIENT_KEY',
      'REDIS_TLS_CACERT',
      'REDIS_TLS_SKIP_HOSTNAME_VERIFICATION',
      'REDIS_AUTH',
      'REDIS_AUTH_FILE',
      'REDIS_SENTINEL_AUTH',
      'REDIS_AWS_IAM_AUTH',
      'REDIS_AWS_IAM_CACHE_NAME',
      'REDIS_AWS_IAM_USER_ID',
      'REDIS_AWS_IAM_SERVERLESS',
      'REDIS_AWS_IAM_REGION',
      'REDIS_PERSECOND_AWS_IAM_AUTH',
      'SHADOW_MODE',
      'QUOTA_MODE',
      'RESPONSE_DYNAMIC_METADATA',
      'NEAR_LIMIT_RATIO',
      'LOCAL_CACHE_SIZE_IN_BYTES',
      'EXPIRATION_JITTER_MAX_SECONDS',
      'STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT',
      'USE_CALENDAR_MONTH_RATE_LIMIT',
      'REDIS_STARTUP_INITIAL_INTERVAL',
      'REDIS_STARTUP_MAX_INTERVAL',
      'REDIS_STARTUP_MAX_ELAPSED_TIME',
    ]) {
      expect({ name, known: names.has(name) }).toEqual({ name, known: true });
    }
  });
});

describe('refusals name the setting, the value and what is accepted', () => {
  it.each([
    [{ PORT: 'eighty' }, 'PORT: "eighty" is not valid; accepted: a whole number from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT: "70000" is not valid; accepted: a whole number from 0 to 65535'],
    [
      { USE_STATSD: 'yes' },
      'USE_STATSD: "yes" is not valid; accepted: true, false, 1, 0, t, f, TRUE, FALSE, True, False',
    ],
    [
      { STATS_FLUSH_INTERVAL: '10' },
      'STATS_FLUSH_INTERVAL: "10" is not valid; accepted: a duration such as 150us, 500ms, 10s, 1m30s or 24h (units ns, us, ms, s, m, h)',
    ],
    [
      { REDIS_TIMEOUT: '5 seconds' },
      'REDIS_TIMEOUT: "5 seconds" is not valid; accepted: a duration such as 150us, 500ms, 10s, 1m30s or 24h (units ns, us, ms, s, m, h)',
    ],
    [
      { BACKEND_TYPE: 'postgres' },
      'BACKEND_TYPE: "postgres" is not valid; accepted: redis, memcache, memory',
    ],
    [
      { REDIS_TYPE: 'ring' },
      'REDIS_TYPE: "ring" is not valid; accepted: single, sentinel, cluster',
    ],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT: "xml" is not valid; accepted: text, json'],
    [{ GRPC_HTTP2: 'nghttp2' }, 'GRPC_HTTP2: "nghttp2" is not valid; accepted: own, node'],
    [
      { DEBUG_RECENT_DECISIONS: '1000000' },
      'DEBUG_RECENT_DECISIONS: "1000000" is not valid; accepted: a whole number from 0 to 100000',
    ],
    [
      { NEAR_LIMIT_RATIO: '1.5' },
      'NEAR_LIMIT_RATIO: "1.5" is not valid; accepted: a number from 0 to 1',
    ],
    [
      { CONFIG_TYPE: 'CONSUL' },
      'CONFIG_TYPE: "CONSUL" is not valid; accepted: FILE, GRPC_XDS_SOTW',
    ],
    [
      { EXTRA_TAGS: 'novalue' },
      'EXTRA_TAGS: "novalue" is not valid; accepted: a comma-separated list of key:value pairs, e.g. k1:v1,k2:v2',
    ],
    [
      { KVSTORE_POOL_SIZE: 'many' },
      'KVSTORE_POOL_SIZE: "many" is not valid; accepted: a whole number of at least 1',
    ],
    [
      { REDIS_URL: 'localhost' },
      'REDIS_URL: "localhost" is not valid for REDIS_SOCKET_TYPE tcp; accepted: host:port or redis://[user:password@]host:port',
    ],
  ])('%j', (env, message) => {
    expect(problems(env)).toEqual([message]);
  });

  it('refuses REDIS_AUTH with REDIS_AUTH_FILE', () => {
    expect(problems({ REDIS_AUTH: 'a', REDIS_AUTH_FILE: '/f' })).toEqual([
      'REDIS_AUTH: REDIS_AUTH and REDIS_AUTH_FILE are both set; they exclude each other: set only one',
    ]);
  });

  it('refuses MEMCACHE_HOST_PORT with MEMCACHE_SRV', () => {
    expect(problems({ MEMCACHE_HOST_PORT: 'h:1', MEMCACHE_SRV: '_m._tcp.x' })).toContain(
      'MEMCACHE_HOST_PORT: MEMCACHE_HOST_PORT and MEMCACHE_SRV are both set; they exclude each other: set only one',
    );
  });

  it('refuses REDIS_PERSECOND without its URL', () => {
    expect(problems({ REDIS_PERSECOND: 'true' })).toEqual([
      'REDIS_PERSECOND_URL: REDIS_PERSECOND is true but REDIS_PERSECOND_URL is not set',
    ]);
  });

  it('reads WORKERS, 1 by default, and refuses more than one with the memory backend', () => {
    expect(loadSettings({}).server.workers).toBe(1);
    expect(loadSettings({ WORKERS: '4', BACKEND_TYPE: 'redis' }).server.workers).toBe(4);
    expect(problems({ WORKERS: '0' })).toEqual([
      'WORKERS: "0" is not valid; accepted: a whole number from 1 to 256',
    ]);
    expect(problems({ WORKERS: '2', BACKEND_TYPE: 'memory' })).toEqual([
      'WORKERS: WORKERS is 2 but BACKEND_TYPE is memory, whose counters live inside one process: each worker would count on its own. Use WORKERS=1 with the memory backend, or BACKEND_TYPE=redis',
    ]);
  });

  it('lists every problem at once', () => {
    expect(problems({ PORT: 'x', GRPC_PORT: 'y', LOG_FORMAT: 'z' })).toHaveLength(3);
  });

  it('accepts the xDS backoff values the reference starts with', () => {
    // The reference caps every wait at the maximum, and reads the factor as a multiplier.
    const xds = loadSettings({
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '30s',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '10s',
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: '2',
    }).config.source;
    expect(xds).toMatchObject({ type: 'FILE' });
    expect(problems({ XDS_CLIENT_BACKOFF_RANDOM_FACTOR: '-1' })).toEqual([
      'XDS_CLIENT_BACKOFF_RANDOM_FACTOR: "-1" is not valid; accepted: a number of at least 0',
    ]);
  });

  it('passes OTEL_SEMCONV_STABILITY_OPT_IN tokens of other conventions through', () => {
    expect(
      loadSettings({ OTEL_SEMCONV_STABILITY_OPT_IN: 'http/dup, rpc/dup' }).tracing
        .semconvStabilityOptIn,
    ).toEqual(['http/dup', 'rpc/dup']);
  });

  it('reads tcp4 and tcp6 socket types as tcp, as Go dialers do', () => {
    for (const type of ['tcp4', 'tcp6']) {
      expect(loadSettings({ REDIS_SOCKET_TYPE: type }).backend).toMatchObject({
        main: { socketType: 'tcp' },
      });
    }
  });

  it('puts every problem in the error message, one per line', () => {
    expect(() => loadSettings({ PORT: 'x' })).toThrow(
      'invalid settings:\n  PORT: "x" is not valid; accepted: a whole number from 0 to 65535',
    );
  });
});

describe('tracing settings', () => {
  it.each([
    [
      { TRACING_ENABLED: 'yes' },
      'TRACING_ENABLED: "yes" is not valid; accepted: true, false, 1, 0, t, f, TRUE, FALSE, True, False',
    ],
    [
      { TRACING_EXPORTER_PROTOCOL: 'zipkin' },
      'TRACING_EXPORTER_PROTOCOL: "zipkin" is not valid; accepted: http, http/protobuf, http/json, grpc',
    ],
    [
      { TRACING_SAMPLING_RATE: '-0.1' },
      'TRACING_SAMPLING_RATE: "-0.1" is not valid; accepted: a number from 0 to 1',
    ],
    [
      { TRACING_SAMPLING_RATE: 'half' },
      'TRACING_SAMPLING_RATE: "half" is not valid; accepted: a number from 0 to 1',
    ],
    [
      { TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' },
      'OTEL_EXPORTER_OTLP_ENDPOINT: "otel-collector:4318" is not valid; accepted: an http:// or https:// URL, such as http://otel-collector:4318 (OTLP/HTTP) or http://otel-collector:4317 (OTLP/gRPC)',
    ],
    [
      { TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' },
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "not a url" is not valid; accepted: an http:// or https:// URL, such as http://otel-collector:4318 (OTLP/HTTP) or http://otel-collector:4317 (OTLP/gRPC)',
    ],
  ])('refuses %j', (env, message) => {
    expect(problems(env)).toEqual([message]);
  });

  it('reads the OTLP destination only while tracing is on', () => {
    expect(loadSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'anything' }).tracing.enabled).toBe(false);
    expect(
      loadSettings({
        TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel-collector.observability:4317',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces',
      }).tracing.enabled,
    ).toBe(true);
  });
});

it('turns tracing on when asked', () => {
  expect(loadSettings({ TRACING_ENABLED: 'true' }).tracing.enabled).toBe(true);
});

describe('gRPC listener TLS', () => {
  it('reads the files and the client checks when TLS is on', () => {
    expect(
      loadSettings({
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: '/tls/tls.crt',
        GRPC_SERVER_TLS_KEY: '/tls/tls.key',
        GRPC_CLIENT_TLS_CACERT: '/tls/ca.crt',
        GRPC_CLIENT_TLS_SAN: 'envoy.mesh',
      }).server.grpc.tls,
    ).toEqual({
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
      clientCaFile: '/tls/ca.crt',
      clientSan: 'envoy.mesh',
    });
    expect(loadSettings({}).server.grpc.tls).toBeUndefined();
  });

  it.each([
    [
      { GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_KEY: 'k' },
      'GRPC_SERVER_TLS_CERT: GRPC_SERVER_USE_TLS is true but GRPC_SERVER_TLS_CERT is not set: give the path of the server certificate chain (PEM)',
    ],
    [
      { GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_CERT: 'c' },
      'GRPC_SERVER_TLS_KEY: GRPC_SERVER_USE_TLS is true but GRPC_SERVER_TLS_KEY is not set: give the path of the server private key (PEM)',
    ],
    [
      { GRPC_CLIENT_TLS_CACERT: '/tls/ca.crt' },
      'GRPC_CLIENT_TLS_CACERT: GRPC_CLIENT_TLS_CACERT is set but GRPC_SERVER_USE_TLS is false',
    ],
    [
      { GRPC_CLIENT_TLS_SAN: 'envoy' },
      'GRPC_CLIENT_TLS_SAN: GRPC_CLIENT_TLS_SAN is set but GRPC_SERVER_USE_TLS is false',
    ],
    [
      {
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: 'c',
        GRPC_SERVER_TLS_KEY: 'k',
        GRPC_CLIENT_TLS_SAN: 'envoy',
      },
      'GRPC_CLIENT_TLS_SAN: GRPC_CLIENT_TLS_SAN is set but GRPC_CLIENT_TLS_CACERT is not',
    ],
  ])('refuses %j', (env, start) => {
    const found = problems(env);
    expect(found).toHaveLength(1);
    expect(found[0]?.startsWith(start)).toBe(true);
  });
});

it('ignores Redis capabilities while another backend is chosen, as the reference does', () => {
  expect(
    loadSettings({
      BACKEND_TYPE: 'memory',
      REDIS_TYPE: 'sentinel',
      REDIS_URL: 'm,h:1',
      REDIS_TLS: 'true',
      REDIS_AWS_IAM_AUTH: 'true',
    }).backend,
  ).toEqual({ type: 'memory', maxKeys: 1_000_000 });
});

describe('mogrifiers', () => {
  it('read their settings under the upper-cased name, as envconfig does', () => {
    const [sink] = loadSettings({
      USE_DOG_STATSD: 'true',
      DOG_STATSD_MOGRIFIERS: 'domain',
      DOG_STATSD_MOGRIFIER_DOMAIN_PATTERN: '^ratelimit\\.service\\.rate_limit\\.(.*)$',
      DOG_STATSD_MOGRIFIER_DOMAIN_NAME: 'ratelimit.service.rate_limit',
      DOG_STATSD_MOGRIFIER_DOMAIN_TAGS: 'key:$1',
    }).stats.sinks;
    expect(sink).toMatchObject({
      type: 'dogstatsd',
      mogrifiers: [{ metricName: 'ratelimit.service.rate_limit', tags: { key: '$1' } }],
    });
  });

  it('prefer both real spellings to the neutral ones', () => {
    const [sink] = loadSettings({
      USE_DOG_STATSD: 'true',
      DOG_STATSD_MOGRIFIERS: 'A',
      TAGGEDPUSH_MOGRIFIER_A_PATTERN: 'neutral',
      DOG_STATSD_MOGRIFIERS_A_PATTERN: 'real',
      DOG_STATSD_MOGRIFIER_A_NAME: 'n',
    }).stats.sinks;
    expect(sink).toMatchObject({ mogrifiers: [{ pattern: 'real' }] });
  });

  it('refuse at start-up a pattern Go would not compile, in its words', () => {
    expect(
      problems({
        USE_DOG_STATSD: 'true',
        DOG_STATSD_MOGRIFIERS: 'A',
        DOG_STATSD_MOGRIFIER_A_PATTERN: '^a(?=b)',
        DOG_STATSD_MOGRIFIER_A_NAME: 'n',
      }),
    ).toEqual([
      'DOG_STATSD_MOGRIFIER_A_PATTERN: "^a(?=b)" is not a valid regular expression (error parsing regexp: invalid or unsupported Perl syntax: `(?=`); patterns are Go\'s (RE2 syntax)',
    ]);
  });

  it('are validated when DogStatsD is on', () => {
    const found = problems({
      USE_DOG_STATSD: 'true',
      DOG_STATSD_MOGRIFIERS: 'A',
      DOG_STATSD_MOGRIFIER_A_PATTERN: '(',
    });
    expect(found).toContain(
      'DOG_STATSD_MOGRIFIER_A_NAME: is not set; mogrifier A needs a metric name',
    );
    expect(
      found.some((p) =>
        p.startsWith('DOG_STATSD_MOGRIFIER_A_PATTERN: "(" is not a valid regular expression'),
      ),
    ).toBe(true);
  });
});

describe('statistics sinks', () => {
  const sinks = (env: Record<string, string>): unknown =>
    loadSettings(env).stats.sinks.map((x) => x.type);

  it('sends statsd by default, and stdout with USE_STATSD=false', () => {
    expect(sinks({})).toEqual(['statsd']);
    expect(sinks({ USE_STATSD: 'false' })).toEqual(['stdout']);
    expect(loadSettings({ STATSD_PROTOCOL: 'tcp' }).stats.sinks[0]).toMatchObject({
      type: 'statsd',
      protocol: 'tcp',
    });
  });

  it('does not add the default statsd sink to Prometheus, but honours an explicit USE_STATSD=true', () => {
    expect(sinks({ USE_PROMETHEUS: 'true' })).toEqual(['prometheus']);
    expect(sinks({ USE_PROMETHEUS: 'true', USE_STATSD: 'false' })).toEqual(['prometheus']);
    expect(sinks({ USE_PROMETHEUS: 'true', USE_STATSD: 'true' })).toEqual(['statsd', 'prometheus']);
  });

  it('replaces statsd with DogStatsD, and refuses both explicitly on', () => {
    expect(sinks({ USE_DOG_STATSD: 'true' })).toEqual(['dogstatsd']);
    expect(problems({ USE_DOG_STATSD: 'true', USE_STATSD: 'true' })).toEqual([
      'USE_DOG_STATSD: USE_STATSD and USE_DOG_STATSD are both true and both send to STATSD_HOST:STATSD_PORT; set USE_STATSD=false',
    ]);
    expect(
      loadSettings({ USE_DOG_STATSD: 'true', USE_STATSD: 'true', DISABLE_STATS: 'true' }).stats
        .enabled,
    ).toBe(false);
  });

  it('reads PROMETHEUS_ADDR as host:port or :port', () => {
    expect(loadSettings({ USE_PROMETHEUS: 'true' }).stats.sinks[0]).toMatchObject({
      host: '0.0.0.0',
      port: 9090,
      path: '/metrics',
    });
    expect(
      loadSettings({ USE_PROMETHEUS: 'true', PROMETHEUS_ADDR: '127.0.0.1:9102' }).stats.sinks[0],
    ).toMatchObject({ host: '127.0.0.1', port: 9102 });
    expect(problems({ USE_PROMETHEUS: 'true', PROMETHEUS_ADDR: '9090' })).toEqual([
      'PROMETHEUS_ADDR: "9090" is not valid; accepted: host:port or :port',
    ]);
    expect(problems({ USE_PROMETHEUS: 'true', PROMETHEUS_PATH: 'metrics' })).toEqual([
      'PROMETHEUS_PATH: "metrics" is not valid; accepted: a path starting with /',
    ]);
  });

  it('reads mogrifiers under both spellings', () => {
    const s = loadSettings({
      USE_DOG_STATSD: 'true',
      USE_DOG_STATSD_MOGRIFIERS: 'RULE',
      DOG_STATSD_MOGRIFIERS_RULE_PATTERN: String.raw`^ratelimit\.service\.rate_limit\.(?P<domain>[^.]+)\.(.*)$`,
      DOG_STATSD_MOGRIFIER_RULE_NAME: 'ratelimit.rule',
      DOG_STATSD_MOGRIFIER_RULE_TAGS: 'domain:$1,rest:$2',
    });
    expect(s.stats.sinks[0]).toMatchObject({
      type: 'dogstatsd',
      mogrifiers: [
        {
          name: 'RULE',
          pattern: String.raw`^ratelimit\.service\.rate_limit\.(?P<domain>[^.]+)\.(.*)$`,
          metricName: 'ratelimit.rule',
          tags: { domain: '$1', rest: '$2' },
        },
      ],
    });
  });
});

describe('the xDS source', () => {
  it('reads every CONFIG_GRPC_XDS_* and XDS_CLIENT_* setting', () => {
    const s = loadSettings({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: 'cp:18000',
      CONFIG_GRPC_XDS_NODE_ID: 'rls-1',
      CONFIG_GRPC_XDS_NODE_METADATA: 'a=1,b:2,envoy.io:zone=us-east',
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'x-k:v',
      CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: '/ca.pem',
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'cp.internal',
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '1s',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '1m',
      XDS_CLIENT_BACKOFF_RANDOM_FACTOR: '0.2',
      XDS_CLIENT_BACKOFF_JITTER: 'false',
      XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: '8388608',
    });
    expect(s.config.source).toEqual({
      type: 'GRPC_XDS_SOTW',
      nodeId: 'rls-1',
      nodeMetadata: { a: '1', b: '2', 'envoy.io:zone': 'us-east' },
      serverUrl: 'cp:18000',
      connectRetryIntervalMs: 3000,
      additionalHeaders: { 'x-k': 'v' },
      tls: {
        certFile: undefined,
        keyFile: undefined,
        caFile: '/ca.pem',
        serverName: 'cp.internal',
        skipHostnameVerification: false,
      },
      backoff: { initialIntervalMs: 1000, maxIntervalMs: 60000, randomFactor: 0.2, jitter: false },
      maxMessageSizeBytes: 8388608,
    });
  });

  it('wants the client certificate and key together', () => {
    expect(
      problems({
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: '/c.pem',
      }),
    ).toEqual([
      'CONFIG_GRPC_XDS_CLIENT_TLS_CERT: CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together; set both or neither',
    ]);
  });
});

describe('the limits section', () => {
  it('has defaults far above what Envoy sends', () => {
    expect(loadSettings({}).limits).toEqual({
      request: {
        maxDescriptors: 256,
        maxEntries: 64,
        maxKeyBytes: 1024,
        maxValueBytes: 8192,
        maxRequestBytes: 1024 * 1024,
      },
      connection: {
        maxConcurrentStreams: 1000,
        maxBufferedBytes: 64 * 1024 * 1024,
        maxBufferedRequests: 10_000,
        headerTimeoutMs: 10_000,
        messageTimeoutMs: 10_000,
        firstMessageTimeoutMs: 10_000,
        idleTimeoutMs: 300_000,
        maxConnections: 20_000,
        maxConnectionsPerPeer: 2_000,
        maxUnsentBytesPerConnection: 4 * 1024 * 1024,
        maxUnsentBytes: 64 * 1024 * 1024,
        unsentTimeoutMs: 20_000,
      },
    });
  });

  it('refuses a buffer budget too small for four requests of the largest size', () => {
    expect(() =>
      loadSettings({
        MAX_REQUEST_BYTES: String(32 * 1024 * 1024),
        GRPC_MAX_BUFFERED_BYTES: '67108864',
      }),
    ).toThrow(/GRPC_MAX_BUFFERED_BYTES: must be at least 4 × MAX_REQUEST_BYTES/);
  });

  it('refuses timeouts of 0, which would turn them off', () => {
    expect(() => loadSettings({ HEADER_TIMEOUT: '0', IDLE_TIMEOUT: '0s' })).toThrow(
      /HEADER_TIMEOUT: must be above 0[\s\S]*IDLE_TIMEOUT: must be above 0/,
    );
    expect(() =>
      loadSettings({
        MESSAGE_TIMEOUT: '0',
        RLQS_FIRST_MESSAGE_TIMEOUT: '0s',
        GRPC_UNSENT_TIMEOUT: '0ms',
      }),
    ).toThrow(
      /MESSAGE_TIMEOUT: must be above 0[\s\S]*RLQS_FIRST_MESSAGE_TIMEOUT: must be above 0[\s\S]*GRPC_UNSENT_TIMEOUT: must be above 0/,
    );
  });
});

describe('secret settings', () => {
  it('are never quoted in a refusal', () => {
    const secret = 'hunter2-in-a-header';
    let message = '';
    try {
      loadSettings({
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: `authorization ${secret}`,
      });
    } catch (err: unknown) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: the value given (a secret, not shown) is not valid',
    );
    expect(message).not.toContain(secret);
  });

  it('mask the credentials of a malformed Redis URL', () => {
    let message = '';
    try {
      loadSettings({ REDIS_URL: 'redis//admin:pa55word@cache' });
    } catch (err: unknown) {
      message = (err as Error).message;
    }
    expect(message).toContain('"*****@cache" is not valid for REDIS_SOCKET_TYPE tcp');
    expect(message).not.toContain('pa55word');
  });
});
