// Statistic names of the reference service, each written once.

/** The xDS statistics that carry a version as a tag. */
export type XdsVersionStat = 'last_ack_version' | 'last_nack_version';

export const SERVICE_SCOPE = 'ratelimit.service';
export const RULE_SCOPE = 'ratelimit.service.rate_limit';
export const SHOULD_RATE_LIMIT_SCOPE = 'ratelimit.service.call.should_rate_limit';

export const STAT = Object.freeze({
  configLoadSuccess: `${SERVICE_SCOPE}.config_load_success`,
  configLoadError: `${SERVICE_SCOPE}.config_load_error`,
  globalShadowMode: `${SERVICE_SCOPE}.global_shadow_mode`,
  redisError: `${SHOULD_RATE_LIMIT_SCOPE}.redis_error`,
  serviceError: `${SHOULD_RATE_LIMIT_SCOPE}.service_error`,
  /**
   * A gauge of 1 tagged with the service version (`version`): `ratelimit_build_info{version}`
   * in Prometheus, `ratelimit.build_info.__version=<v>` in statsd.
   */
  buildInfo: 'ratelimit.build_info',
  /** Keys the memory backend evicted before their expiry to stay within MEMORY_MAX_KEYS. */
  memoryEvictions: 'ratelimit.memory.evictions',
  /** Errors no code path expected, caught by the last-resort handler (logged too). */
  unexpectedError: `${SERVICE_SCOPE}.unexpected_error`,
  /** Runtime statistics keys refused by the cardinality cap (STATS_MAX_RULE_KEYS). */
  ruleStatsDropped: `${SERVICE_SCOPE}.rule_stats_dropped`,
  /** Gauges of the local over-limit cache, named as the reference's cache library reports. */
  localCache: (name: string) => `ratelimit.localcache.${name}`,
  /** Connection statistics of a Redis instance: `redis_pool` or `redis_per_second_pool`. */
  redisPool: (pool: string, name: string) => `ratelimit.${pool}.${name}`,
  /**
   * A backend instance's circuit breaker (BACKEND_FAILURE_*): `opened`, `probes`,
   * `answered_<mode>` counters and the `state` gauge (0 closed, 1 open, 2 probing).
   */
  breaker: (instance: string, name: string) => `ratelimit.circuit_breaker.${instance}.${name}`,
  /** The memcached store's operations, under the reference's `memcache` scope. */
  memcache: (name: string) => `ratelimit.memcache.${name}`,
  domainNotFound: (domain: string) => `${RULE_SCOPE}.${sanitizeStatName(domain)}.domain_not_found`,
  /** The file loader's own statistics, named as the reference's runtime loader reports them. */
  runtimeLoadAttempts: 'runtime.load_attempts',
  runtimeLoadFailures: 'runtime.load_failures',
  runtimeNumValues: 'runtime.num_values',
  /** The gRPC listener's certificate files: changes taken into service, and changes refused. */
  tlsReloadSuccess: 'ratelimit.tls.grpc_server.reload_success',
  tlsReloadError: 'ratelimit.tls.grpc_server.reload_error',
  /** gRPC clients cut because their certificate lacks GRPC_CLIENT_TLS_SAN. */
  tlsClientSanRefused: 'ratelimit.tls.grpc_server.client_san_refused',
  /** TLS handshakes that failed: a plaintext client, no or an untrusted client certificate. */
  tlsHandshakeError: 'ratelimit.tls.grpc_server.handshake_error',
  /**
   * What a bound refused, by reason (`connections_total`, `connections_per_peer`,
   * `requests_total`, ...: docs/observability.md lists them); logged once per peer a minute.
   */
  refused: (reason: string) => `ratelimit.server.refused.${reason}`,
  /** Connections closed (HTTP/2: GOAWAY) after IDLE_TIMEOUT without a call open. */
  idleClosed: 'ratelimit.server.idle_closed',
  /**
   * The xDS client's management server (CONFIG_TYPE=GRPC_XDS_SOTW): `connected` (1 once a
   * stream is answered, 0 when it ends), `update_age_seconds` (since the last ACK), the
   * `acks` and `nacks` sent, and `last_ack_version` and `last_nack_version`, gauges of 1
   * tagged with the version (`version`), one series at a time.
   */
  xds: (name: 'connected' | 'update_age_seconds' | 'acks' | 'nacks' | XdsVersionStat) =>
    `ratelimit.xds.${name}`,
  totalRequests: (method: string) => `ratelimit_server.${method}.total_requests`,
  responseTime: (method: string) => `ratelimit_server.${method}.response_time`,
});

/** Suffixes of the per-rule counters. */
export const RULE_STAT_SUFFIXES = Object.freeze({
  totalHits: 'total_hits',
  overLimit: 'over_limit',
  nearLimit: 'near_limit',
  withinLimit: 'within_limit',
  overLimitWithLocalCache: 'over_limit_with_local_cache',
  shadowMode: 'shadow_mode',
  totalNegativeHits: 'total_negative_hits',
} as const);

const IPV4 = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/g;

/**
 * Makes a stat name safe for the statsd line protocol: `:` and `|` become `_`, and the dots
 * of IPv4 addresses become `_` so an address does not split into path segments.
 */
export function sanitizeStatName(name: string): string {
  let out = name;
  if (out.includes(':') || out.includes('|')) out = out.replace(/[:|]/g, '_');
  return out.replace(IPV4, (ip) => ip.replace(/\./g, '_'));
}
