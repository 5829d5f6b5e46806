// What each setting of the schema means, in an operator's words: docs/settings.md and
// `ratelimit --help` are generated from this table, and a test fails when a setting lacks a line.

/**
 * One sentence or phrase per setting, by its real name. The per-second instance's settings
 * (REDIS_PERSECOND_*) need a line only where they differ: otherwise they mean what their
 * REDIS_ namesake means, for that instance. "(new)" marks a setting the reference service
 * does not have.
 */
export const SETTING_DESCRIPTIONS: Readonly<Record<string, string>> = Object.freeze({
  // server
  HOST: 'address of the HTTP listener (`/json`, `/healthcheck`, `/livez`)',
  PORT: 'port of the HTTP listener; `0` picks a free one and logs it',
  DEBUG_HOST:
    'address of the debug listener (status page, `/rlconfig`, `/stats`, JSON for operators)',
  DEBUG_PORT: 'port of the debug listener',
  DEBUG_PROFILING_ENABLED:
    'serve V8 heap snapshots and CPU profiles on the debug listener; they hold memory contents (new)',
  DEBUG_RECENT_DECISIONS:
    'refusals kept for `/decisions/recent` and the status page, at most 100000; `0` keeps none (new)',
  GRPC_HOST: 'address of the gRPC listener',
  GRPC_PORT: 'port of the gRPC listener',
  GRPC_UDS: 'a unix socket path for the gRPC listener instead of `GRPC_HOST:GRPC_PORT`',
  WORKERS:
    'server processes sharing the listeners (node:cluster); the supervisor loads and compiles each configuration once (one watcher or ADS stream, one ACK or NACK) and hands it to every worker; not with the `memory` backend (new)',
  GRPC_MAX_CONNECTION_AGE: 'a gRPC connection older than this is asked to go away (GOAWAY)',
  GRPC_MAX_CONNECTION_AGE_GRACE: 'how long calls on an aged connection may still finish',
  GRPC_HTTP2:
    "`own` (the service's HTTP/2) or `node` (Node's http2, nghttp2): a fallback should a client disagree with `own`, at about 4x the CPU per call (new)",
  GRPC_SERVER_USE_TLS:
    'TLS on the gRPC listener (HTTP/2 only, TLS 1.2 at least); the files are watched and reloaded',
  GRPC_SERVER_TLS_CERT: 'the gRPC listener certificate chain (PEM)',
  GRPC_SERVER_TLS_KEY: 'the gRPC listener private key (PEM)',
  GRPC_CLIENT_TLS_CACERT: 'mutual TLS: clients need a certificate signed by this CA (PEM)',
  GRPC_CLIENT_TLS_SAN: "mutual TLS: this DNS name must be among the client certificate's SANs",
  GRPC_SERVER_TLS_CA_CERT:
    'ignored, with a warning at start, as the reference ignores it (Envoy Gateway sets it); client certificates are asked for with `GRPC_CLIENT_TLS_CACERT`',
  // log
  LOG_LEVEL:
    '`debug`, `info`, `warning` (or `warn`), `error` ...: start-up, listeners and reloads are `info`; what needs attention is `warning` or `error`',
  LOG_FORMAT:
    '`text` (logfmt, as the reference writes) or `json` (an object a line, with `@timestamp`, `level` and `@message`); the lines about the process itself (a signal, a fatal start-up error, an unsupported Node.js) follow it too, written whatever `LOG_LEVEL` says: one JSON line each with `json`, a plain `ratelimit: ...` line with `text`',
  // config
  CONFIG_TYPE: '`FILE` reads rule files; `GRPC_XDS_SOTW` takes them from an xDS management server',
  FORCE_START_WITHOUT_INITIAL_CONFIG:
    'open the listeners before the first configuration has loaded (requests are refused until then); without it nothing listens (not ready) until the first load, however long the xDS management server takes to appear',
  RUNTIME_ROOT: 'root of the configuration tree',
  RUNTIME_SUBDIRECTORY: 'directory below the root',
  RUNTIME_APPDIRECTORY: 'directory below the subdirectory holding the `*.yaml` files',
  RUNTIME_IGNOREDOTFILES: 'skip files and directories whose name starts with `.`',
  RUNTIME_WATCH_ROOT:
    'reload when the root symlink is repointed; `false` reloads on any change in the directory',
  MERGE_DOMAIN_CONFIG: 'allow several files for one domain; their rules are merged',
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED:
    'health (`/healthcheck`, gRPC health) fails until a configuration with at least one domain is loaded',
  CONFIG_COMPILE_TIMEOUT:
    'a compile process that answers nothing for this long is killed and its update refused (an xDS NACK naming this setting); the configuration in service keeps serving; `0` waits for ever (new)',
  // xds
  CONFIG_GRPC_XDS_NODE_ID: 'the node id presented to the management server',
  CONFIG_GRPC_XDS_NODE_METADATA:
    'node metadata, `k1:v1,k2:v2` (or `k=v`, as the reference reads it)',
  CONFIG_GRPC_XDS_SERVER_URL: 'the management server, `host:port`',
  CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL:
    'retry interval (spread by ±half) until the management server has answered once; retries go on for ever, the first failure logged as a warning and the rest at debug',
  CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS:
    '`k1:v1,k2:v2` sent as call metadata (a secret: never logged)',
  CONFIG_GRPC_XDS_SERVER_USE_TLS: 'TLS to the management server',
  CONFIG_GRPC_XDS_CLIENT_TLS_CERT: 'client certificate for mutual TLS to the management server',
  CONFIG_GRPC_XDS_CLIENT_TLS_KEY: "that certificate's key",
  CONFIG_GRPC_XDS_SERVER_TLS_CACERT:
    'CA to trust for the management server, besides the system CAs',
  CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'the name to verify in its certificate instead of the host',
  XDS_CLIENT_BACKOFF_INITIAL_INTERVAL:
    'first wait before reopening a lost stream; waits double from here',
  XDS_CLIENT_BACKOFF_MAX_INTERVAL:
    'longest wait between reconnections; the backoff resets when a message arrives',
  XDS_CLIENT_BACKOFF_RANDOM_FACTOR: 'each wait is spread over ±this share of itself',
  XDS_CLIENT_BACKOFF_JITTER: 'spread the waits at all',
  XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: "largest response accepted; `0` is gRPC's 4 MiB",
  // stats
  USE_STATSD: 'statsd; `false` (and no other sink) prints statistics to stdout',
  STATSD_HOST: 'where statsd and DogStatsD lines go',
  STATSD_PORT: 'port of `STATSD_HOST`',
  STATSD_PROTOCOL: '`udp`, or `tcp` as the reference sends (new)',
  STATS_MAX_RULE_KEYS:
    'most distinct rule statistics keys made from request values; past it hits count under the rule (new)',
  STATS_MAX_RUNTIME_KEY_BYTES:
    'bytes of statistics names made of request values; idle ones are freed (new)',
  EXTRA_TAGS: '`k1:v1,k2:v2` on every statistic (statsd names, DogStatsD tags, Prometheus labels)',
  STATS_FLUSH_INTERVAL: 'how often statistics are sent',
  DISABLE_STATS: 'keep and send no statistics',
  SANITIZE_DESCRIPTOR_METRIC_DOTS:
    '`.` in descriptor keys and values becomes `_` in statistics names',
  USE_DOG_STATSD:
    'DogStatsD with tags instead of statsd; names reshaped by `DOG_STATSD_MOGRIFIER_<NAME>_*`',
  USE_DOG_STATSD_MOGRIFIERS:
    'the mogrifiers to apply, in order (also read as `DOG_STATSD_MOGRIFIERS`)',
  USE_PROMETHEUS: 'a Prometheus scrape endpoint',
  PROMETHEUS_ADDR: 'its listen address, `host:port` or `:port`',
  PROMETHEUS_PATH: 'its path',
  PROMETHEUS_MAPPER_YAML:
    "a statsd_exporter mapping file instead of the reference's built-in mapping; a file that does not exist means no mapping (escaped statsd names), with a warning, as in the reference",
  PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: 'response time histograms in milliseconds, not seconds',
  // backend
  BACKEND_TYPE: '`redis`, `memcache` or `memory` (in-process, one host; new)',
  MEMORY_MAX_KEYS: 'keys the `memory` backend holds; when full, the one nearest expiry goes (new)',
  // limiter
  EXPIRATION_JITTER_MAX_SECONDS: "random extra seconds on each key's expiry",
  LOCAL_CACHE_SIZE_IN_BYTES:
    'in-process cache of over-limit keys, bounded by this size; `0` is off',
  NEAR_LIMIT_RATIO: 'share of a limit past which hits count as `near_limit`',
  CACHE_KEY_PREFIX: 'prepended to every counter key',
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT:
    'a request refused by one limit is not counted by the others',
  USE_CALENDAR_MONTH_RATE_LIMIT: '`month` is the calendar month in UTC instead of 30 days',
  SHADOW_MODE: 'every rule in shadow mode: over-limit requests are counted but let through',
  QUOTA_MODE: 'every rule in quota mode',
  RESPONSE_DYNAMIC_METADATA: 'the request and rule metadata in the response `dynamic_metadata`',
  LIMIT_RESPONSE_HEADERS_ENABLED: 'rate limit response headers',
  LIMIT_LIMIT_HEADER: 'name of the limit header',
  LIMIT_REMAINING_HEADER: 'name of the remaining header',
  LIMIT_RESET_HEADER: 'name of the reset header',
  LIMIT_PER_UNIT_HEADERS_ENABLED: '`RateLimit-Limit-<Units>` headers per unit',
  LIMIT_REQUEST_HEADERS_ENABLED: 'the same values as headers on the request to the upstream',
  LIMIT_REQUEST_LIMIT_HEADER: 'name of the limit request header',
  LIMIT_REQUEST_REMAINING_HEADER: 'name of the remaining request header',
  LIMIT_REQUEST_RESET_HEADER: 'name of the reset request header',
  LIMIT_RESPONSE_HEADERS_FORMAT:
    '`legacy`, or `ietf`: `RateLimit-Policy` and `RateLimit` fields for every limit (new)',
  // breaker
  BACKEND_FAILURE_THRESHOLD:
    'consecutive failures of one backend instance that open its circuit breaker; `0` is off (new)',
  BACKEND_FAILURE_COOLDOWN: 'how long an open breaker waits before one call probes (new)',
  BACKEND_FAILURE_MODE:
    'what an open breaker answers: `error`, `allow`, `deny` or `local` (counts in memory) (new)',
  BACKEND_FAILURE_LOCAL_SHARE:
    'with `local`: the share of each limit one instance grants, 0 to 1 (new)',
  // redis, both instances
  REDIS_PERSECOND:
    'a second Redis instance for per-second limits, configured by `REDIS_PERSECOND_*`',
  REDIS_HEALTH_CHECK_ACTIVE_CONNECTION:
    'health fails while Redis is unreachable (or a breaker is open)',
  REDIS_STARTUP_INITIAL_INTERVAL: 'first wait between attempts of the first connection',
  REDIS_STARTUP_MAX_INTERVAL: 'longest wait between those attempts',
  REDIS_STARTUP_MAX_ELAPSED_TIME: 'give up and exit after this long; `0` retries for ever',
  // redis, one instance
  REDIS_SOCKET_TYPE: '`tcp` or `unix`; unset, it follows the URL (a path is a unix socket)',
  REDIS_TYPE: '`single`, `sentinel` or `cluster`',
  REDIS_URL:
    '`host:port`, `redis://[user:pass@]host:port`, `rediss://...`, a socket path; sentinel: `master,host:port,...`; cluster: seed nodes',
  REDIS_POOL_SIZE: 'accepted, no effect: one pipelined connection per instance or node',
  REDIS_AUTH: '`password` or `user:password`',
  REDIS_AUTH_FILE: 'a file holding `REDIS_AUTH`, read again on every connection (new)',
  REDIS_SENTINEL_AUTH: '`password` or `user:password` for the sentinels',
  REDIS_TLS: 'TLS to Redis (also on with a `rediss://` URL)',
  REDIS_TLS_CLIENT_CERT: 'client certificate (PEM), with `REDIS_TLS_CLIENT_KEY`',
  REDIS_TLS_CLIENT_KEY: "the client certificate's key (PEM)",
  REDIS_TLS_CACERT: 'a CA to trust besides the system CAs (PEM)',
  REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: 'skip the host name check; the chain is still verified',
  REDIS_PIPELINE_WINDOW:
    "`0` writes each event-loop turn's commands at once; above 0, at most that often",
  REDIS_PIPELINE_LIMIT: 'accepted, no effect: commands are written in one batch per flush',
  REDIS_CLUSTER_PIPELINE_PARALLELISM:
    'accepted, no effect: every cluster node is written to at once',
  REDIS_TIMEOUT: 'connect and command timeout; no request waits longer for Redis',
  REDIS_POOL_ON_EMPTY_BEHAVIOR: 'accepted, no effect (there is no pool)',
  REDIS_POOL_ON_EMPTY_WAIT_DURATION: 'accepted, no effect (there is no pool)',
  REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR:
    'close the connection after a `READONLY` reply, so the next one finds the new master',
  REDIS_AWS_IAM_AUTH: 'ElastiCache IAM tokens as the password (needs TLS)',
  REDIS_AWS_IAM_CACHE_NAME: 'the replication group ID or serverless cache name',
  REDIS_AWS_IAM_USER_ID: 'the ElastiCache user (also its name)',
  REDIS_AWS_IAM_SERVERLESS: 'the cache is an ElastiCache Serverless cache',
  REDIS_AWS_IAM_REGION: "the AWS region, when the SDK's chain finds none",
  // redis, the per-second instance where it differs from its REDIS_ namesake
  REDIS_PERSECOND_URL:
    'as `REDIS_URL`, for the per-second instance; no default: required with `REDIS_PERSECOND=true`',
  REDIS_PERSECOND_TLS_CACERT:
    "as `REDIS_TLS_CACERT`; while no `REDIS_PERSECOND_TLS_*` file is set, the main instance's files are used",
  REDIS_PERSECOND_TLS_CLIENT_CERT:
    "as `REDIS_TLS_CLIENT_CERT`; while no `REDIS_PERSECOND_TLS_*` file is set, the main instance's files are used",
  REDIS_PERSECOND_TLS_CLIENT_KEY:
    "as `REDIS_TLS_CLIENT_KEY`; while no `REDIS_PERSECOND_TLS_*` file is set, the main instance's files are used",
  // memcache
  MEMCACHE_HOST_PORT: 'memcached servers, `host:port,...`; the order picks the server of each key',
  MEMCACHE_SRV: 'an SRV name `_service._proto.name` instead of the list',
  MEMCACHE_SRV_REFRESH: 'how often the SRV name is resolved again; `0` never',
  MEMCACHE_MAX_IDLE_CONNS: 'connections kept to each server (below 1 means 2)',
  MEMCACHE_TIMEOUT: 'wait for a memcached answer, connecting included (new)',
  MEMCACHE_TLS: 'TLS to memcached',
  MEMCACHE_TLS_CLIENT_CERT: 'client certificate (PEM), with `MEMCACHE_TLS_CLIENT_KEY`',
  MEMCACHE_TLS_CLIENT_KEY: "the client certificate's key (PEM)",
  MEMCACHE_TLS_CACERT: 'a CA to trust besides the system CAs (PEM)',
  MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'skip the host name check; the chain is still verified',
  // tracing
  TRACING_ENABLED: 'OpenTelemetry spans over OTLP, to `OTEL_EXPORTER_OTLP_ENDPOINT`',
  TRACING_EXPORTER_PROTOCOL:
    '`http` (OTLP/HTTP protobuf, as the reference sends; also `http/protobuf`), `http/json` (OTLP/HTTP JSON) or `grpc`',
  TRACING_SERVICE_NAME: '`service.name` of the spans',
  TRACING_SERVICE_NAMESPACE: '`service.namespace`',
  TRACING_SERVICE_INSTANCE_ID: '`service.instance.id`; unset, a random UUID (the pod name suits)',
  TRACING_SAMPLING_RATE: 'share of calls traced on their own, 0 to 1 (parent-based)',
  OTEL_SEMCONV_STABILITY_OPT_IN: '`rpc/old` or `rpc/dup` for the older RPC attribute names',
  // limits
  MAX_DESCRIPTORS_PER_REQUEST: 'more is refused: gRPC `INVALID_ARGUMENT`, HTTP 400 (new)',
  MAX_ENTRIES_PER_DESCRIPTOR: 'more is refused likewise (new)',
  MAX_DESCRIPTOR_KEY_BYTES: 'a longer key is refused likewise (new)',
  MAX_DESCRIPTOR_VALUE_BYTES: 'a longer value is refused likewise (new)',
  MAX_REQUEST_BYTES:
    'largest gRPC message (also after inflating) or `/json` body: `RESOURCE_EXHAUSTED`, HTTP 413 (new)',
  GRPC_MAX_CONCURRENT_STREAMS: 'open streams per HTTP/2 connection (new)',
  GRPC_MAX_BUFFERED_BYTES:
    'bytes of unfinished gRPC requests held across all connections; one connection may hold 1/32 of it, and at least one `MAX_REQUEST_BYTES` request; past either, the stream is refused `REFUSED_STREAM` (new)',
  GRPC_MAX_BUFFERED_REQUESTS:
    'gRPC requests holding bytes while unfinished (a body or header block in several frames) across all connections; one connection may hold 1/32 of it; past either, the stream is refused `REFUSED_STREAM` (new)',
  HEADER_TIMEOUT: 'time to send the connection preface, headers and body (new)',
  IDLE_TIMEOUT:
    'a connection with no call open is closed after this long, HTTP/2 with GOAWAY (as grpc-go `MaxConnectionIdle`) (new)',
  MAX_CONNECTIONS:
    "client connections of the gRPC, HTTP, debug and Prometheus listeners together (under WORKERS the supervisor's scrape listener is not counted); past it a new one is refused at accept unless its peer holds less than its fair share, which then closes a connection of the peer holding the most (new)",
  MAX_CONNECTIONS_PER_PEER:
    'client connections from one peer address; past it a new one is refused at accept (new)',
  MESSAGE_TIMEOUT:
    "time for a streaming call's message (an RLQS report) to arrive in full once its first byte has; past it the stream ends `DEADLINE_EXCEEDED` naming this setting and its bytes are let go (new)",
  RLQS_FIRST_MESSAGE_TIMEOUT:
    'time for an RLQS stream to send its first whole report once opened (Envoy sends it at once); past it the stream ends `DEADLINE_EXCEEDED` naming this setting (new)',
  GRPC_MAX_UNSENT_BYTES_PER_CONNECTION:
    'bytes written to one gRPC connection that its client has not read; past it, RLQS assignments for it wait (the newest per bucket kept) until it drains (new)',
  GRPC_MAX_UNSENT_BYTES:
    'the same across all connections; past it, the connection holding more than 1/32 of it is cut first (GOAWAY, then closed) (new)',
  GRPC_UNSENT_TIMEOUT:
    'a connection past `GRPC_MAX_UNSENT_BYTES_PER_CONNECTION` this long without draining gets GOAWAY and is closed (new)',
  // quota (RLQS, docs/rlqs.md)
  RLQS_MAX_BUCKETS_PER_STREAM:
    'buckets one RLQS stream may watch; further ones get no assignment and are counted (new)',
  RLQS_MAX_STREAMS_PER_CONNECTION:
    'RLQS streams one connection may hold; one more is refused `RESOURCE_EXHAUSTED` (new)',
  RLQS_MAX_STREAMS:
    'RLQS streams the process holds open, all connections together; past half of it a peer (remote address) opens more only within 1/32 of it; a new stream past it is refused `RESOURCE_EXHAUSTED` naming this setting (new)',
  RLQS_MAX_BUCKETS:
    'watches of buckets a quota rule governs, all streams together (a bucket two streams watch counts twice); past half of it a peer watches more only within 1/32 of it; a usage past it gets no assignment, the rest of its report is served (new)',
  RLQS_MAX_BUCKETS_WITHOUT_RULE:
    'watches of buckets no quota rule governs, apart from `RLQS_MAX_BUCKETS`, first come first served (refusing one costs its Envoy nothing); a usage past it is left out, the rest of its report is served (new)',
  RLQS_MAX_BUCKET_ID_BYTES:
    'bytes of one bucket id (`BucketId` message) in a report; a longer one is refused alone before it is decoded (new)',
  RLQS_MAX_BUCKET_ID_BYTES_TOTAL:
    "bytes the RLQS streams' bucket id caches hold, all streams together; past half of it a peer caches more only within 1/32 of it; an id not cached is decoded at each report (new)",
  RLQS_TICK:
    'how often silent Envoys expire, assignments are refreshed and replicas exchange demand; at least `10ms` (new)',
  RLQS_SHARE_TTL:
    "how long a replica's published demand lives unrefreshed, at least twice `RLQS_TICK`: how soon a dead replica's share returns (new)",
});
