// Reads process.env (or a given map) once into frozen, typed Settings, listing every problem found.
import { describeError } from '../lib/errors';
import type { FieldSpec } from './fields';
import { map as mapField } from './fields';
import { namesFor } from './aliases';
import { SettingsError, type SettingsProblem } from './errors';
import { NOT_BUILT } from './not-built';
import { redisIam, redisModeProblems, redisTls } from './redis-modes';
import { SCHEMA, type Group, type RawSettings } from './schema';
import type {
  BackendSettings,
  MogrifierSettings,
  RedisAuthSettings,
  RedisInstanceSettings,
  Settings,
  StatsSinkSettings,
} from './types';

export type Environment = Readonly<Record<string, string | undefined>>;

/** Where each value came from: the name it was read under, or undefined for a default. */
type Sources = Map<string, string>;

/**
 * The value of a setting given under any of its real spellings, or else under a neutral one:
 * a real name always wins.
 */
function lookup(
  env: Environment,
  ...realNames: readonly string[]
): { name: string; text: string } | undefined {
  // namesFor lists a name's own spelling first, then its aliases.
  const names = [...realNames, ...realNames.flatMap((real) => namesFor(real).slice(1))];
  for (const name of names) {
    const text = env[name];
    // An empty value counts as unset, as container runtimes and charts often pass empty strings.
    if (text !== undefined && text !== '') return { name, text };
  }
  return undefined;
}

function describeValue(text: string): string {
  return JSON.stringify(text);
}

function parseRaw(env: Environment, problems: SettingsProblem[], sources: Sources): RawSettings {
  const raw: Record<string, Record<string, unknown>> = {};
  for (const [groupName, g] of Object.entries(SCHEMA) as [
    string,
    Group<Record<string, FieldSpec<unknown>>>,
  ][]) {
    const values: Record<string, unknown> = {};
    for (const [field, spec] of Object.entries(g.fields)) {
      const realName = g.prefix + field;
      const found = lookup(env, realName);
      if (found === undefined) {
        values[field] = spec.defaultValue;
        continue;
      }
      sources.set(realName, found.name);
      const result = spec.parse(found.text);
      if (result.ok) {
        values[field] = result.value;
      } else {
        values[field] = spec.defaultValue;
        problems.push({
          setting: found.name,
          message: `${describeValue(found.text)} is not valid; accepted: ${result.accepted}`,
        });
      }
    }
    raw[groupName] = values;
  }
  return raw as unknown as RawSettings;
}

function optional(text: string): string | undefined {
  return text === '' ? undefined : text;
}

function parseAuth(text: string): RedisAuthSettings {
  if (text === '') return { kind: 'none' };
  const colon = text.indexOf(':');
  if (colon < 0) return { kind: 'static', username: undefined, password: text };
  return { kind: 'static', username: text.slice(0, colon), password: text.slice(colon + 1) };
}

function redisInstance(
  raw: RawSettings['redis'],
  prefix: string,
  problems: SettingsProblem[],
): RedisInstanceSettings {
  if (raw.AUTH !== '' && raw.AUTH_FILE !== '') {
    problems.push({
      setting: `${prefix}AUTH`,
      message: `${prefix}AUTH and ${prefix}AUTH_FILE are both set; they exclude each other: set only one`,
    });
  }
  const url = raw.URL.trim();
  const socketType =
    raw.SOCKET_TYPE === '' ? (url.startsWith('/') ? 'unix' : 'tcp') : raw.SOCKET_TYPE;
  if (url === '') {
    // The per-second URL has its own clearer message when REDIS_PERSECOND is on.
    if (prefix !== 'REDIS_PERSECOND_')
      problems.push({
        setting: `${prefix}URL`,
        message: 'is empty; accepted: host:port or a unix socket path',
      });
  } else if (
    socketType === 'tcp' &&
    raw.TYPE === 'single' &&
    !/^(rediss?:\/\/.+|[^,\s]+:\d+)$/.test(url)
  ) {
    problems.push({
      setting: `${prefix}URL`,
      message: `${describeValue(url)} is not valid for ${prefix}SOCKET_TYPE tcp; accepted: host:port or redis://[user:password@]host:port`,
    });
  } else if (raw.TYPE === 'sentinel' && url.split(',').length < 2) {
    problems.push({
      setting: `${prefix}URL`,
      message: `${describeValue(url)} is not valid for ${prefix}TYPE sentinel; accepted: master-name,host:port[,host:port...]`,
    });
  }
  problems.push(...redisModeProblems(raw, prefix, url, socketType));
  return {
    settingPrefix: prefix,
    socketType,
    type: raw.TYPE,
    url,
    poolSize: raw.POOL_SIZE,
    auth: raw.AUTH_FILE !== '' ? { kind: 'file', path: raw.AUTH_FILE } : parseAuth(raw.AUTH),
    sentinelAuth: parseAuth(raw.SENTINEL_AUTH),
    tls: redisTls(raw, url),
    pipelineWindowMs: raw.PIPELINE_WINDOW,
    clusterPipelineParallelism: raw.CLUSTER_PIPELINE_PARALLELISM,
    timeoutMs: raw.TIMEOUT,
    poolOnEmptyBehavior: raw.POOL_ON_EMPTY_BEHAVIOR,
    poolOnEmptyWaitMs: raw.POOL_ON_EMPTY_WAIT_DURATION,
    closeConnectionOnReadonlyError: raw.CLOSE_CONNECTION_ON_READONLY_ERROR,
    iam: redisIam(raw),
  };
}

function backend(raw: RawSettings, problems: SettingsProblem[]): BackendSettings {
  const m = raw.memcache;
  if (m.HOST_PORT.length > 0 && m.SRV !== '') {
    problems.push({
      setting: 'MEMCACHE_HOST_PORT',
      message:
        'MEMCACHE_HOST_PORT and MEMCACHE_SRV are both set; they exclude each other: set only one',
    });
  }
  switch (raw.limiter.BACKEND_TYPE) {
    case 'memory':
      return { type: 'memory' };
    case 'memcache':
      if (m.HOST_PORT.length === 0 && m.SRV === '') {
        problems.push({
          setting: 'MEMCACHE_HOST_PORT',
          message:
            'BACKEND_TYPE is memcache but neither MEMCACHE_HOST_PORT nor MEMCACHE_SRV is set',
        });
      }
      return {
        type: 'memcache',
        hostPorts: m.HOST_PORT,
        srv: optional(m.SRV),
        srvRefreshMs: m.SRV_REFRESH,
        maxIdleConns: m.MAX_IDLE_CONNS,
        tls: m.TLS
          ? {
              certFile: optional(m.TLS_CLIENT_CERT),
              keyFile: optional(m.TLS_CLIENT_KEY),
              caFile: optional(m.TLS_CACERT),
              serverName: undefined,
              skipHostnameVerification: m.TLS_SKIP_HOSTNAME_VERIFICATION,
            }
          : undefined,
      };
    case 'redis': {
      const common = raw.redisCommon;
      return {
        type: 'redis',
        main: redisInstance(raw.redis, 'REDIS_', problems),
        perSecond: common.PERSECOND
          ? redisInstance(raw.redisPerSecond, 'REDIS_PERSECOND_', problems)
          : undefined,
        healthCheckActiveConnection: common.HEALTH_CHECK_ACTIVE_CONNECTION,
        startup: {
          initialIntervalMs: common.STARTUP_INITIAL_INTERVAL,
          maxIntervalMs: common.STARTUP_MAX_INTERVAL,
          maxElapsedMs: common.STARTUP_MAX_ELAPSED_TIME,
        },
      };
    }
  }
}

/** Go regular expressions spell named groups (?P<name>...); JavaScript spells them (?<name>...). */
export function goRegExpToJs(pattern: string): string {
  return pattern.replace(/\(\?P</g, '(?<');
}

function mogrifiers(
  env: Environment,
  names: readonly string[],
  problems: SettingsProblem[],
): MogrifierSettings[] {
  const tagsSpec = mapField();
  const out: MogrifierSettings[] = [];
  for (const given of names) {
    // The reference reads these through envconfig, which upper-cases the whole name.
    const name = given.toUpperCase();
    const read = (suffix: string): { name: string; text: string } | undefined =>
      lookup(
        env,
        `DOG_STATSD_MOGRIFIER_${name}_${suffix}`,
        `DOG_STATSD_MOGRIFIERS_${name}_${suffix}`,
      );
    const pattern = read('PATTERN');
    const metricName = read('NAME');
    const tagsText = read('TAGS');
    const base = `DOG_STATSD_MOGRIFIER_${name}`;
    if (pattern === undefined) {
      problems.push({
        setting: `${base}_PATTERN`,
        message: `is not set; mogrifier ${name} needs a regular expression`,
      });
    } else {
      try {
        new RegExp(goRegExpToJs(pattern.text));
      } catch (err: unknown) {
        problems.push({
          setting: pattern.name,
          message: `${describeValue(pattern.text)} is not a valid regular expression (${describeError(err)})`,
        });
      }
    }
    if (metricName === undefined) {
      problems.push({
        setting: `${base}_NAME`,
        message: `is not set; mogrifier ${name} needs a metric name`,
      });
    }
    let tags: Readonly<Record<string, string>> = {};
    if (tagsText !== undefined) {
      const parsed = tagsSpec.parse(tagsText.text);
      if (parsed.ok) tags = parsed.value;
      else
        problems.push({
          setting: tagsText.name,
          message: `${describeValue(tagsText.text)} is not valid; accepted: ${parsed.accepted}`,
        });
    }
    if (pattern !== undefined && metricName !== undefined) {
      out.push({ name, pattern: goRegExpToJs(pattern.text), metricName: metricName.text, tags });
    }
  }
  return out;
}

/** `host:port` or `:port` (all interfaces), as Go's listeners read PROMETHEUS_ADDR. */
export function parseListenAddress(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return {
    host: match[1] ?? (match[2] === '' || match[2] === undefined ? '0.0.0.0' : match[2]),
    port,
  };
}

/**
 * The sinks to flush to. USE_STATSD is on by default only while no other sink is chosen, so
 * USE_PROMETHEUS=true alone does not also send statsd to localhost (the reference refuses
 * that combination unless USE_STATSD=false is also set; both spellings work here).
 */
function statsSinks(
  st: RawSettings['stats'],
  isStatsdExplicit: boolean,
  env: Environment,
  problems: SettingsProblem[],
): StatsSinkSettings[] {
  const sinks: StatsSinkSettings[] = [];
  if (st.USE_DOG_STATSD) {
    // With DISABLE_STATS nothing is sent, so the clash does not matter (the reference starts).
    if (isStatsdExplicit && st.USE_STATSD && !st.DISABLE_STATS) {
      problems.push({
        setting: 'USE_DOG_STATSD',
        message:
          'USE_STATSD and USE_DOG_STATSD are both true and both send to STATSD_HOST:STATSD_PORT; set USE_STATSD=false',
      });
    }
    sinks.push({
      type: 'dogstatsd',
      host: st.STATSD_HOST,
      port: st.STATSD_PORT,
      protocol: st.STATSD_PROTOCOL,
      mogrifiers: mogrifiers(env, st.USE_DOG_STATSD_MOGRIFIERS, problems),
    });
  } else if (st.USE_STATSD && (isStatsdExplicit || !st.USE_PROMETHEUS)) {
    sinks.push({
      type: 'statsd',
      host: st.STATSD_HOST,
      port: st.STATSD_PORT,
      protocol: st.STATSD_PROTOCOL,
    });
  }
  if (st.USE_PROMETHEUS) {
    const address = parseListenAddress(st.PROMETHEUS_ADDR);
    if (address === undefined) {
      problems.push({
        setting: 'PROMETHEUS_ADDR',
        message: `${describeValue(st.PROMETHEUS_ADDR)} is not valid; accepted: host:port or :port`,
      });
    }
    if (!st.PROMETHEUS_PATH.startsWith('/')) {
      problems.push({
        setting: 'PROMETHEUS_PATH',
        message: `${describeValue(st.PROMETHEUS_PATH)} is not valid; accepted: a path starting with /`,
      });
    }
    sinks.push({
      type: 'prometheus',
      host: address?.host ?? '0.0.0.0',
      port: address?.port ?? 9090,
      path: st.PROMETHEUS_PATH,
      mapperYaml: optional(st.PROMETHEUS_MAPPER_YAML),
      responseTimeAsMilliseconds: st.PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS,
    });
  }
  if (sinks.length === 0) sinks.push({ type: 'stdout' });
  return sinks;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as object)) deepFreeze(inner);
  }
  return value;
}

/**
 * Parses the environment into Settings. Throws SettingsError listing every problem:
 * unparsable values, settings that exclude each other, and settings that ask for a
 * capability this version does not have.
 */
export function loadSettings(env: Environment = process.env): Settings {
  const problems: SettingsProblem[] = [];
  const sources: Sources = new Map();
  const raw = parseRaw(env, problems, sources);
  const nameOf = (realName: string): string => sources.get(realName) ?? realName;

  for (const row of NOT_BUILT) {
    const value = row.asked(raw);
    if (value !== undefined) {
      problems.push({
        setting: nameOf(row.setting),
        message: `${describeValue(value)} asks for ${row.capability}, which this version does not have yet; unset it or use a release that has it`,
      });
    }
  }

  const s = raw.server;
  const c = raw.config;
  const x = raw.xds;
  const st = raw.stats;
  const l = raw.limiter;
  const t = raw.tracing;

  if (st.STATS_FLUSH_INTERVAL <= 0 && !st.DISABLE_STATS) {
    problems.push({ setting: nameOf('STATS_FLUSH_INTERVAL'), message: 'must be longer than 0' });
  }
  if (s.GRPC_SERVER_USE_TLS && (s.GRPC_SERVER_TLS_CERT === '' || s.GRPC_SERVER_TLS_KEY === '')) {
    problems.push({
      setting: 'GRPC_SERVER_TLS_CERT',
      message:
        'GRPC_SERVER_USE_TLS is true but GRPC_SERVER_TLS_CERT or GRPC_SERVER_TLS_KEY is not set',
    });
  }
  if (
    c.CONFIG_TYPE === 'GRPC_XDS_SOTW' &&
    x.CONFIG_GRPC_XDS_SERVER_USE_TLS &&
    (x.CONFIG_GRPC_XDS_CLIENT_TLS_CERT === '') !== (x.CONFIG_GRPC_XDS_CLIENT_TLS_KEY === '')
  ) {
    problems.push({
      setting: 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT',
      message:
        'CONFIG_GRPC_XDS_CLIENT_TLS_CERT and CONFIG_GRPC_XDS_CLIENT_TLS_KEY go together; set both or neither',
    });
  }
  if (raw.redisCommon.PERSECOND && raw.redisPerSecond.URL === '' && l.BACKEND_TYPE === 'redis') {
    problems.push({
      setting: 'REDIS_PERSECOND_URL',
      message: 'REDIS_PERSECOND is true but REDIS_PERSECOND_URL is not set',
    });
  }

  if (s.WORKERS > 1 && l.BACKEND_TYPE === 'memory') {
    problems.push({
      setting: 'WORKERS',
      message: `WORKERS is ${s.WORKERS} but BACKEND_TYPE is memory, whose counters live inside one process: each worker would count on its own. Use WORKERS=1 with the memory backend, or BACKEND_TYPE=redis`,
    });
  }
  const backendSettings = backend(raw, problems);
  const sinks = statsSinks(raw.stats, sources.has('USE_STATSD'), env, problems);

  if (problems.length > 0) throw new SettingsError(problems);

  const level = s.LOG_LEVEL === 'warn' ? 'warning' : s.LOG_LEVEL;
  const settings: Settings = {
    server: {
      workers: s.WORKERS,
      http: { host: s.HOST, port: s.PORT },
      debug: { host: s.DEBUG_HOST, port: s.DEBUG_PORT },
      grpc: {
        host: s.GRPC_HOST,
        port: s.GRPC_PORT,
        uds: optional(s.GRPC_UDS),
        maxConnectionAgeMs: s.GRPC_MAX_CONNECTION_AGE,
        maxConnectionAgeGraceMs: s.GRPC_MAX_CONNECTION_AGE_GRACE,
        tls: s.GRPC_SERVER_USE_TLS
          ? {
              certFile: s.GRPC_SERVER_TLS_CERT,
              keyFile: s.GRPC_SERVER_TLS_KEY,
              clientCaFile: optional(s.GRPC_CLIENT_TLS_CACERT),
              clientSan: optional(s.GRPC_CLIENT_TLS_SAN),
            }
          : undefined,
      },
    },
    log: { level, format: s.LOG_FORMAT },
    config: {
      source:
        c.CONFIG_TYPE === 'FILE'
          ? {
              type: 'FILE',
              runtimeRoot: c.RUNTIME_ROOT,
              runtimeSubdirectory: c.RUNTIME_SUBDIRECTORY,
              runtimeAppDirectory: c.RUNTIME_APPDIRECTORY,
              ignoreDotFiles: c.RUNTIME_IGNOREDOTFILES,
              watchRoot: c.RUNTIME_WATCH_ROOT,
            }
          : {
              type: 'GRPC_XDS_SOTW',
              nodeId: x.CONFIG_GRPC_XDS_NODE_ID,
              nodeMetadata: x.CONFIG_GRPC_XDS_NODE_METADATA,
              serverUrl: x.CONFIG_GRPC_XDS_SERVER_URL,
              connectRetryIntervalMs: x.CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL,
              additionalHeaders: x.CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS,
              tls: x.CONFIG_GRPC_XDS_SERVER_USE_TLS
                ? {
                    certFile: optional(x.CONFIG_GRPC_XDS_CLIENT_TLS_CERT),
                    keyFile: optional(x.CONFIG_GRPC_XDS_CLIENT_TLS_KEY),
                    caFile: optional(x.CONFIG_GRPC_XDS_SERVER_TLS_CACERT),
                    serverName: optional(x.CONFIG_GRPC_XDS_SERVER_TLS_SAN),
                    skipHostnameVerification: false,
                  }
                : undefined,
              backoff: {
                initialIntervalMs: x.XDS_CLIENT_BACKOFF_INITIAL_INTERVAL,
                maxIntervalMs: x.XDS_CLIENT_BACKOFF_MAX_INTERVAL,
                randomFactor: x.XDS_CLIENT_BACKOFF_RANDOM_FACTOR,
                jitter: x.XDS_CLIENT_BACKOFF_JITTER,
              },
              maxMessageSizeBytes:
                x.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES > 0
                  ? x.XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES
                  : undefined,
            },
      forceStartWithoutInitialConfig: c.FORCE_START_WITHOUT_INITIAL_CONFIG,
      healthyWithAtLeastOneConfigLoaded: s.HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED,
      mergeDomainConfig: c.MERGE_DOMAIN_CONFIG,
    },
    stats: {
      enabled: !st.DISABLE_STATS,
      flushIntervalMs: st.STATS_FLUSH_INTERVAL,
      sanitizeDescriptorMetricDots: st.SANITIZE_DESCRIPTOR_METRIC_DOTS,
      extraTags: st.EXTRA_TAGS,
      sinks: sinks,
      maxRuleKeys: st.STATS_MAX_RULE_KEYS,
    },
    backend: backendSettings,
    limiter: {
      expirationJitterMaxSeconds: l.EXPIRATION_JITTER_MAX_SECONDS,
      localCacheSizeBytes: l.LOCAL_CACHE_SIZE_IN_BYTES,
      nearLimitRatio: l.NEAR_LIMIT_RATIO,
      cacheKeyPrefix: l.CACHE_KEY_PREFIX,
      stopCacheKeyIncrementWhenOverlimit: l.STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
      useCalendarMonth: l.USE_CALENDAR_MONTH_RATE_LIMIT,
      globalShadowMode: l.SHADOW_MODE,
      globalQuotaMode: l.QUOTA_MODE,
      responseDynamicMetadata: l.RESPONSE_DYNAMIC_METADATA,
      responseHeaders: {
        enabled: l.LIMIT_RESPONSE_HEADERS_ENABLED,
        limit: l.LIMIT_LIMIT_HEADER,
        remaining: l.LIMIT_REMAINING_HEADER,
        reset: l.LIMIT_RESET_HEADER,
        perUnit: l.LIMIT_PER_UNIT_HEADERS_ENABLED,
      },
      requestHeaders: {
        enabled: l.LIMIT_REQUEST_HEADERS_ENABLED,
        limit: l.LIMIT_REQUEST_LIMIT_HEADER,
        remaining: l.LIMIT_REQUEST_REMAINING_HEADER,
        reset: l.LIMIT_REQUEST_RESET_HEADER,
      },
    },
    tracing: {
      enabled: t.TRACING_ENABLED,
      exporterProtocol: t.TRACING_EXPORTER_PROTOCOL,
      serviceName: t.TRACING_SERVICE_NAME,
      serviceNamespace: t.TRACING_SERVICE_NAMESPACE,
      serviceInstanceId: t.TRACING_SERVICE_INSTANCE_ID,
      samplingRate: t.TRACING_SAMPLING_RATE,
      semconvStabilityOptIn: t.OTEL_SEMCONV_STABILITY_OPT_IN,
    },
  };
  return deepFreeze(settings);
}
