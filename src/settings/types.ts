// The typed, frozen Settings the rest of the service receives, one slice per concern.
import type { LogFormat, LogLevel } from '../lib/logger';

export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/** TLS files of the gRPC listener (GRPC_SERVER_USE_TLS and friends). */
export interface GrpcServerTlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  /** A CA bundle enables mutual TLS. */
  readonly clientCaFile: string | undefined;
  readonly clientSan: string | undefined;
}

export interface GrpcListenerSettings extends ListenAddress {
  /** Unix socket path; when set the listener binds it instead of host:port. */
  readonly uds: string | undefined;
  readonly maxConnectionAgeMs: number;
  readonly maxConnectionAgeGraceMs: number;
  /**
   * GRPC_HTTP2: which HTTP/2 implementation serves the gRPC layer, the service's own (`own`)
   * or node:http2 (`node`, a fallback costing about 4 times the CPU per call).
   */
  readonly http2: 'own' | 'node';
  readonly tls: GrpcServerTlsSettings | undefined;
  /**
   * GRPC_SERVER_TLS_CA_CERT, which Envoy Gateway sets and the reference does not read: read only
   * to say at start that it is ignored (GRPC_CLIENT_TLS_CACERT asks for client certificates).
   */
  readonly ignoredServerCaFile?: string;
}

export interface DebugListenerSettings extends ListenAddress {
  /** DEBUG_PROFILING_ENABLED: heap snapshots and CPU profiles, which hold memory contents. */
  readonly isProfilingEnabled: boolean;
  /**
   * DEBUG_RECENT_DECISIONS: how many over-limit (and shadow-mode would-be-over) decisions
   * `/decisions/recent` keeps; 0 records none.
   */
  readonly recentDecisions: number;
}

export interface ServerSettings {
  /** Server processes sharing the listeners (node:cluster); 1 runs everything in this one. */
  readonly workers: number;
  readonly http: ListenAddress;
  readonly debug: DebugListenerSettings;
  readonly grpc: GrpcListenerSettings;
}

export interface LogSettings {
  readonly level: LogLevel;
  readonly format: LogFormat;
}

export interface FileSourceSettings {
  readonly type: 'FILE';
  readonly runtimeRoot: string;
  readonly runtimeSubdirectory: string;
  readonly runtimeAppDirectory: string;
  readonly ignoreDotFiles: boolean;
  /** True: reload when RUNTIME_ROOT (a symlink) is repointed; false: on changes in the directory. */
  readonly watchRoot: boolean;
}

export interface ClientTlsSettings {
  readonly certFile: string | undefined;
  readonly keyFile: string | undefined;
  readonly caFile: string | undefined;
  /** Expected name in the server certificate, overriding the host name. */
  readonly serverName: string | undefined;
  readonly skipHostnameVerification: boolean;
}

export interface BackoffSettings {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  readonly randomFactor: number;
  readonly jitter: boolean;
}

export interface XdsSourceSettings {
  readonly type: 'GRPC_XDS_SOTW';
  readonly nodeId: string;
  readonly nodeMetadata: Readonly<Record<string, string>>;
  readonly serverUrl: string;
  readonly connectRetryIntervalMs: number;
  readonly additionalHeaders: Readonly<Record<string, string>>;
  readonly tls: ClientTlsSettings | undefined;
  readonly backoff: BackoffSettings;
  /** Largest message accepted from the management server; undefined keeps gRPC's default. */
  readonly maxMessageSizeBytes: number | undefined;
}

export interface ConfigSettings {
  readonly source: FileSourceSettings | XdsSourceSettings;
  readonly forceStartWithoutInitialConfig: boolean;
  readonly healthyWithAtLeastOneConfigLoaded: boolean;
  readonly mergeDomainConfig: boolean;
  /** How long the compile process may stay silent before it is killed; 0 waits for ever. */
  readonly compileTimeoutMs: number;
}

/** A DogStatsD mogrifier: a pattern that turns a flat name into a name plus tags. */
export interface MogrifierSettings {
  readonly name: string;
  readonly pattern: string;
  readonly metricName: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Where flushed statistics go; several can be on at once. */
/** Where flushed statistics go; several can be on at once. */
export type StatsSinkSettings =
  | {
      readonly type: 'statsd';
      readonly host: string;
      readonly port: number;
      readonly protocol: 'udp' | 'tcp';
    }
  | {
      readonly type: 'dogstatsd';
      readonly host: string;
      readonly port: number;
      readonly protocol: 'udp' | 'tcp';
      readonly mogrifiers: readonly MogrifierSettings[];
    }
  | {
      readonly type: 'prometheus';
      readonly host: string;
      readonly port: number;
      readonly path: string;
      readonly mapperYaml: string | undefined;
      readonly responseTimeAsMilliseconds: boolean;
    }
  | { readonly type: 'stdout' };

export interface StatsSettings {
  /** False when DISABLE_STATS is true: nothing is counted or sent. */
  readonly enabled: boolean;
  readonly flushIntervalMs: number;
  readonly sanitizeDescriptorMetricDots: boolean;
  readonly extraTags: Readonly<Record<string, string>>;
  /** The sinks flushed to; never empty while statistics are enabled. */
  readonly sinks: readonly StatsSinkSettings[];
  /** Most distinct rule statistics keys; runtime keys past it count under the rule's own key. */
  readonly maxRuleKeys: number;
  /** Most UTF-8 bytes that keys built from request values may hold together. */
  readonly maxRuntimeKeyBytes: number;
}

/** Credentials for Redis: a fixed value, or a file re-read on every connection attempt. */
export type RedisAuthSettings =
  | { readonly kind: 'none' }
  | { readonly kind: 'static'; readonly username: string | undefined; readonly password: string }
  | { readonly kind: 'file'; readonly path: string };

/** ElastiCache IAM authentication of one instance (REDIS_AWS_IAM_* or REDIS_PERSECOND_AWS_IAM_*). */
export interface RedisIamSettings {
  /** Replication group ID or serverless cache name: the host of the signed request. */
  readonly cacheName: string;
  /** The ElastiCache user; also the AUTH user name. */
  readonly userId: string;
  readonly serverless: boolean;
  /** undefined: the AWS SDK resolves it (AWS_REGION, the shared config file). */
  readonly region: string | undefined;
}

export interface RedisInstanceSettings {
  /** Setting-name prefix of this instance (REDIS_ or REDIS_PERSECOND_), for messages. */
  readonly settingPrefix: string;
  readonly socketType: 'tcp' | 'unix';
  readonly type: 'single' | 'sentinel' | 'cluster';
  readonly url: string;
  readonly poolSize: number;
  readonly auth: RedisAuthSettings;
  readonly sentinelAuth: RedisAuthSettings;
  readonly tls: ClientTlsSettings | undefined;
  readonly pipelineWindowMs: number;
  readonly clusterPipelineParallelism: number;
  readonly timeoutMs: number;
  readonly poolOnEmptyBehavior: 'CREATE' | 'ERROR' | 'WAIT';
  readonly poolOnEmptyWaitMs: number;
  readonly closeConnectionOnReadonlyError: boolean;
  /** Set when the password is an IAM token signed locally (REDIS_AWS_IAM_AUTH). */
  readonly iam: RedisIamSettings | undefined;
}

export interface RedisBackendSettings {
  readonly type: 'redis';
  readonly main: RedisInstanceSettings;
  /** A second instance that holds only the per-second limits (REDIS_PERSECOND=true). */
  readonly perSecond: RedisInstanceSettings | undefined;
  readonly healthCheckActiveConnection: boolean;
  readonly startup: {
    readonly initialIntervalMs: number;
    readonly maxIntervalMs: number;
    /** 0 retries for ever. */
    readonly maxElapsedMs: number;
  };
}

export interface MemcacheBackendSettings {
  readonly type: 'memcache';
  readonly hostPorts: readonly string[];
  readonly srv: string | undefined;
  readonly srvRefreshMs: number;
  readonly maxIdleConns: number;
  /** How long a request waits for its server, connecting included (MEMCACHE_TIMEOUT). */
  readonly timeoutMs: number;
  readonly tls: ClientTlsSettings | undefined;
}

export interface MemoryBackendSettings {
  readonly type: 'memory';
  /** Most keys held; a new key past it evicts the key nearest its expiry. */
  readonly maxKeys: number;
}

export type BackendSettings =
  RedisBackendSettings | MemcacheBackendSettings | MemoryBackendSettings;

export interface HeaderNames {
  readonly enabled: boolean;
  readonly limit: string;
  readonly remaining: string;
  readonly reset: string;
}

export interface LimiterSettings {
  readonly expirationJitterMaxSeconds: number;
  /** 0 disables the local over-limit cache. */
  readonly localCacheSizeBytes: number;
  readonly nearLimitRatio: number;
  readonly cacheKeyPrefix: string;
  readonly stopCacheKeyIncrementWhenOverlimit: boolean;
  readonly useCalendarMonth: boolean;
  readonly globalShadowMode: boolean;
  readonly globalQuotaMode: boolean;
  readonly responseDynamicMetadata: boolean;
  /**
   * LIMIT_RESPONSE_HEADERS_FORMAT: `legacy` writes the three headers of the closest limit (as the
   * reference), `ietf` the RateLimit-Policy and RateLimit fields listing every limit.
   */
  readonly headersFormat: 'legacy' | 'ietf';
  readonly responseHeaders: HeaderNames & { readonly perUnit: boolean };
  readonly requestHeaders: HeaderNames;
}

/** What an open circuit breaker answers instead of waiting for its backend instance. */
export type BreakerMode = 'error' | 'allow' | 'deny' | 'local';

/** BACKEND_FAILURE_*: a circuit breaker per backend instance. */
export interface BreakerSettings {
  /** Consecutive failures (errors or timeouts) that open a breaker; 0 turns breakers off. */
  readonly threshold: number;
  /** How long a breaker stays open before one call probes the backend. */
  readonly cooldownMs: number;
  readonly mode: BreakerMode;
  /** With `local`: the fraction of each limit this instance may grant while the breaker is open. */
  readonly localShare: number;
}

export interface TracingSettings {
  readonly enabled: boolean;
  readonly exporterProtocol: 'http' | 'http/protobuf' | 'http/json' | 'grpc';
  readonly serviceName: string;
  readonly serviceNamespace: string;
  readonly serviceInstanceId: string;
  readonly samplingRate: number;
  readonly semconvStabilityOptIn: readonly string[];
}

/** What one rate limit request may hold (MAX_* settings of the limits section). */
export interface RequestLimits {
  readonly maxDescriptors: number;
  readonly maxEntries: number;
  /** UTF-8 bytes of the domain and of each descriptor key. */
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  /** A gRPC message (after decompression) or a /json body. */
  readonly maxRequestBytes: number;
}

/** How connections to the listeners are held (limits section). */
export interface ConnectionLimits {
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of the gRPC listener. */
  readonly maxConcurrentStreams: number;
  /** Bytes of unfinished gRPC requests held across all connections (GRPC_MAX_BUFFERED_BYTES). */
  readonly maxBufferedBytes: number;
  /**
   * gRPC requests holding bytes while unfinished (a body or a header block in several frames),
   * across all connections (GRPC_MAX_BUFFERED_REQUESTS).
   */
  readonly maxBufferedRequests: number;
  /** Time a client has to send a request in full (and, on HTTP/2, a new connection's preface). */
  readonly headerTimeoutMs: number;
  /** A streaming call's message must arrive in full within this of its first byte. */
  readonly messageTimeoutMs: number;
  /** An RLQS stream must send its first whole report within this of opening. */
  readonly firstMessageTimeoutMs: number;
  /** An open connection with nothing in flight for this long is closed. */
  readonly idleTimeoutMs: number;
  /** Client connections of all listeners together (MAX_CONNECTIONS). */
  readonly maxConnections: number;
  /** Client connections from one peer address (MAX_CONNECTIONS_PER_PEER), at most the total. */
  readonly maxConnectionsPerPeer: number;
  /**
   * Bytes written to one connection that its client has not taken: past it, messages the
   * server starts (RLQS assignments) wait, the newest per bucket kept.
   */
  readonly maxUnsentBytesPerConnection: number;
  /** The same across all connections; the connection holding most past its share is cut. */
  readonly maxUnsentBytes: number;
  /** A connection past its unsent bound for this long without draining is cut. */
  readonly unsentTimeoutMs: number;
}

export interface LimitsSettings {
  readonly request: RequestLimits;
  readonly connection: ConnectionLimits;
}

/** What the RLQS streams may hold, and how often the quota service looks at them. */
export interface QuotaSettings {
  /** Buckets one stream may watch; further ones get no assignment and are counted. */
  readonly maxBucketsPerStream: number;
  /** RLQS streams one connection may hold open; more are refused RESOURCE_EXHAUSTED. */
  readonly maxStreamsPerConnection: number;
  /** RLQS streams the process holds open; one more is refused RESOURCE_EXHAUSTED. */
  readonly maxStreams: number;
  /** Ruled buckets all streams watch together (one watched by two streams counts twice). */
  readonly maxBuckets: number;
  /** Watches of buckets no rule governs, apart from maxBuckets. */
  readonly maxBucketsWithoutRule: number;
  /** Bytes of one bucket id on the wire; a longer one is refused before it is decoded. */
  readonly maxBucketIdBytes: number;
  /** Bytes the streams' bucket id caches hold together. */
  readonly maxBucketIdBytesTotal: number;
  /** How often silent Envoys expire, assignments are refreshed and replicas exchange demand. */
  readonly tickMs: number;
  /** How long a replica's published demand lives without being published again. */
  readonly shareTtlMs: number;
}

/** Everything the environment configures, validated once and frozen. */
export interface Settings {
  readonly server: ServerSettings;
  readonly log: LogSettings;
  readonly config: ConfigSettings;
  readonly stats: StatsSettings;
  readonly backend: BackendSettings;
  readonly limiter: LimiterSettings;
  readonly breaker: BreakerSettings;
  readonly tracing: TracingSettings;
  readonly limits: LimitsSettings;
  /** RLQS streams (RLQS_*). */
  readonly quota: QuotaSettings;
}
