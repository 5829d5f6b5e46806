// What the bench measures: the service under each kind of traffic, and the two ceilings every
// figure is compared with (a no-op grpc-js server, and node:http2 answering a constant).
import { loadPackageDefinition } from '../src/lib/proto';
import type { Deployed } from './backends';
import type { LoadOptions } from './load';
import type { RlqsShape } from './rlqs-load';
import { SCALE_DOMAIN, pathUnder, scaleSizes, type ScaleConfig } from './config-scale';

export const CONFIG = `domain: bench
descriptors:
  - key: k1
    rate_limit: { unit: second, requests_per_unit: 1000000000 }
  - key: k2
    rate_limit: { unit: minute, requests_per_unit: 1000000000 }
  - key: k3
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: blocked
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: sliding
    rate_limit: { unit: hour, requests_per_unit: 1000000000, algorithm: sliding_window }
  - key: two
    rate_limit: { unit: second, requests_per_unit: 1000000000 }
    rate_limits:
      - { unit: hour, requests_per_unit: 1000000000 }
`;

/** memcached cannot run token buckets and refuses a file that has one: only the others get it. */
export const TOKEN_BUCKET_CONFIG = `domain: bench_tb
descriptors:
  - key: bucket
    rate_limit: { unit: hour, requests_per_unit: 1000000000, algorithm: token_bucket }
`;

export type Kind = 'grpc' | 'http';

export interface Scenario {
  /** Unique; the table's first column. */
  readonly name: string;
  readonly kind: Kind;
  /** noop: the grpc-js ceiling; h2limit: the node:http2 constant server, the limit. */
  readonly server: 'noop' | 'h2limit' | 'service';
  readonly backend: Deployed | 'memory' | '-';
  readonly concurrency: number;
  /** WORKERS for the service; above 1 the server gets two cores. */
  readonly workers: number;
  readonly env: Readonly<Record<string, string>>;
  readonly bodies: (kind: Kind) => string[];
  /** The answers every call must get (gRPC overall code, or HTTP status; several split by |). */
  readonly expect: string;
  /** Each call's body numbered with the next of this many values (see LoadOptions.distinct). */
  readonly distinct?: number;
  /** A grpc-timeout header on every call, as Envoy sends its filter's timeout. */
  readonly grpcTimeout?: string;
  /** Calls sent before the warm-up to fill the counters (numbered like `distinct`). */
  readonly fill?: { readonly bodies: (kind: Kind) => string[]; readonly calls: number };
  /** The row this one's cost per answer is compared with in the cost curves. */
  readonly reference?: string;
  /** The no-op grpc-js scenario this one is divided by, measured in the same round. */
  readonly ceiling: string | undefined;
  /** The node:http2 constant scenario (the limit) this one is divided by, in the same round. */
  readonly limit: string | undefined;
  /**
   * For a Redis mode: the single-Redis scenario with the same traffic; for an algorithm, the
   * fixed window on the same backend. Compared in-round.
   */
  readonly baseline?: string;
  /** SIGSTOP the backend once the service is up, SIGCONT after: it hangs for the whole run. */
  readonly pauseBackend?: boolean;
  /** Another checkout whose built service runs this row (BENCH_BEFORE); this one's otherwise. */
  readonly serviceRoot?: string;
  /**
   * The row run at the same time as this one, just before it in the list (BENCH_SIDE_BY_SIDE):
   * this row's ratios are then taken to it alone.
   */
  readonly beside?: string;
  /** The load is quota streams' usage reports (bench/rlqs-load.ts), not ShouldRateLimit calls. */
  readonly rlqsLoad?: RlqsShape;
  /** Quota streams reporting at their interval beside the row's load for the whole window. */
  readonly rlqsStreams?: BesideStreams;
}

/** Quota streams beside a row's load (bench/rlqs-rows.ts). */
export interface BesideStreams {
  readonly shape: RlqsShape;
  /** Into the idle service before the load starts, or once the load's warm-up has begun. */
  readonly opened: 'first' | 'under load';
}

/** What the load generator sends for a row of ShouldRateLimit calls (bench/load.ts). */
export function loadOptions(
  scenario: Scenario,
  port: number,
  warmupMs: number,
  durationMs: number,
): LoadOptions {
  return {
    kind: scenario.kind,
    host: '127.0.0.1',
    port,
    bodies: scenario.bodies(scenario.kind),
    ...(scenario.distinct === undefined ? {} : { distinct: scenario.distinct }),
    ...(scenario.grpcTimeout === undefined ? {} : { grpcTimeout: scenario.grpcTimeout }),
    ...(scenario.fill === undefined
      ? {}
      : { fill: { bodies: scenario.fill.bodies(scenario.kind), calls: scenario.fill.calls } }),
    concurrency: scenario.concurrency,
    connections: 4,
    warmupMs,
    ...(scenario.rlqsStreams?.opened === 'under load' ? { holdWarmUp: true } : {}),
    durationMs,
  };
}

/** Whether the scenario counts in a deployment the bench starts (Redis in a mode, memcached). */
export function isDeployed(backend: Scenario['backend']): backend is Deployed {
  return backend !== 'memory' && backend !== '-';
}

const rls = loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
  'envoy.service.ratelimit.v3.RateLimitService'
] as unknown as { ShouldRateLimit: { requestSerialize: (value: unknown) => Buffer } };

export type Descriptors = [string, string][][];

function request(
  descriptors: Descriptors,
  domain = 'bench',
): { domain: string; descriptors: unknown[] } {
  return {
    domain,
    descriptors: descriptors.map((entries) => ({
      entries: entries.map(([key, value]) => ({ key, value })),
    })),
  };
}

/** A gRPC frame (flag, length, message) in base64, or a /json body. */
export function body(kind: Kind, descriptors: Descriptors, domain?: string): string {
  if (kind === 'http') return JSON.stringify(request(descriptors, domain));
  const message = rls.ShouldRateLimit.requestSerialize(request(descriptors, domain));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame.toString('base64');
}

export const one = (kind: Kind): string[] => [body(kind, [[['k1', 'a']]])];
export const three = (kind: Kind): string[] => [
  body(kind, [[['k1', 'a']], [['k2', 'b']], [['k3', 'c']]]),
];
export const distinct = (kind: Kind): string[] =>
  Array.from({ length: 10_000 }, (_, i) => body(kind, [[['user', `u${i}`]]]));
export const blocked = (kind: Kind): string[] => [body(kind, [[['blocked', 'x']]])];
const sliding = (kind: Kind): string[] => [body(kind, [[['sliding', 'a']]])];
const bucket = (kind: Kind): string[] => [body(kind, [[['bucket', 'a']]], 'bench_tb')];
const two = (kind: Kind): string[] => [body(kind, [[['two', 'a']]])];

export const CEILING_64 = 'ceiling: no-op grpc-js';
export const CEILING_16 = 'ceiling: no-op grpc-js @16';
export const LIMIT_64 = 'limit: node:http2 constant';
export const LIMIT_16 = 'limit: node:http2 constant @16';

export function scenario(partial: Partial<Scenario> & Pick<Scenario, 'name' | 'bodies'>): Scenario {
  const concurrency = partial.concurrency ?? 64;
  return {
    kind: 'grpc',
    server: 'service',
    backend: 'redis',
    concurrency,
    workers: 1,
    env: {},
    expect: 'OK',
    ceiling: concurrency === 16 ? CEILING_16 : CEILING_64,
    limit: concurrency === 16 ? LIMIT_16 : LIMIT_64,
    ...partial,
  };
}

/** Names of the rows the performance targets (bench/targets.ts) are judged on. */
export const NAMES = {
  redisOne: 'redis, 1 descriptor',
  redisOne16: 'redis, 1 descriptor @16',
  memoryOne: 'memory, 1 descriptor',
  memoryOne16: 'memory, 1 descriptor @16',
  overLimitCached: 'redis, over limit, local cache',
  redisTen: 'redis, 10 descriptors',
  memoryTenThousand: 'memory, 10,000 distinct keys',
  memoryMillion: 'memory, 1,000,000 distinct keys',
  algorithms: ['redis', 'memory'].flatMap((b) => [`${b}, sliding_window`, `${b}, token_bucket`]),
  firstPrefix: 'memory, many rules, the first prefix rule',
  lastPrefix: 'memory, many rules, the last prefix rule',
} as const;

/** The sizes of the configuration-at-scale rows (BENCH_SCALE_SIZES), smallest first. */
export const SCALE_SIZES: readonly ScaleConfig[] = scaleSizes(process.env.BENCH_SCALE_SIZES);
/** The largest: 100,000 exact and 10,000 prefix rules unless BENCH_SCALE_SIZES says otherwise. */
export const SCALE_RULES: ScaleConfig = SCALE_SIZES.at(-1) ?? { exact: 100_000, prefix: 10_000 };
/** The directory of the generated configuration of the prefix rows. */
export const SCALE_DIRECTORY = 'config-scale';

/** A call matching the i-th of the generated prefix rules. */
const prefixRule =
  (i: number) =>
  (kind: Kind): string[] => [body(kind, [[['path', pathUnder(i)]]], SCALE_DOMAIN)];

/** The first and the last prefix rule of the generated configuration: the same cost, or not. */
function prefixRows(): Scenario[] {
  const env = { RUNTIME_APPDIRECTORY: SCALE_DIRECTORY };
  return [
    scenario({ name: NAMES.firstPrefix, backend: 'memory', bodies: prefixRule(0), env }),
    scenario({
      name: NAMES.lastPrefix,
      backend: 'memory',
      bodies: prefixRule(Math.max(0, SCALE_RULES.prefix - 1)),
      env,
      baseline: NAMES.firstPrefix,
    }),
  ];
}

/** Beyond the reference: each compared in-round with the fixed window on the same backend. */
function algorithmRows(backend: 'redis' | 'memory'): Scenario[] {
  const rows = [
    ['sliding_window', sliding],
    ['token_bucket', bucket],
    ['two limits on one descriptor', two],
  ] as const;
  return rows.map(([label, bodies]) =>
    scenario({
      name: `${backend}, ${label}`,
      backend,
      bodies,
      baseline: `${backend}, 1 descriptor`,
    }),
  );
}

/** A ceiling: the same load against a server that does no rate limiting at all. */
function ceiling(name: string, server: 'noop' | 'h2limit', concurrency: number): Scenario {
  return scenario({
    name,
    server,
    backend: '-',
    concurrency,
    bodies: one,
    ceiling: undefined,
    limit: undefined,
  });
}

/**
 * Envoy's rate limit filter sends its timeout (20 ms unless configured) with every call. The
 * rows send 1 s: a deadline costs the same per call whatever its length, and 20 ms turned
 * answers into DEADLINE_EXCEEDED whenever a slow spell of this VM pushed the p99 past it.
 */
const ENVOY_LIKE_TIMEOUT = '1S';

export const SCENARIOS: readonly Scenario[] = [
  ceiling(CEILING_64, 'noop', 64),
  ceiling(CEILING_16, 'noop', 16),
  ceiling(LIMIT_64, 'h2limit', 64),
  ceiling(LIMIT_16, 'h2limit', 16),
  scenario({ name: 'redis, 1 descriptor', bodies: one }),
  scenario({ name: 'redis, 1 descriptor @16', concurrency: 16, bodies: one }),
  scenario({
    name: 'redis, 1 descriptor, grpc-timeout',
    bodies: one,
    grpcTimeout: ENVOY_LIKE_TIMEOUT,
    baseline: 'redis, 1 descriptor',
  }),
  ...algorithmRows('redis'),
  // Redis hangs (SIGSTOP) and the breaker is open: every answer is the service's own.
  scenario({
    name: 'redis, breaker open (allow), redis hanging',
    bodies: one,
    pauseBackend: true,
    baseline: 'redis, 1 descriptor',
    env: {
      REDIS_TIMEOUT: '20ms',
      BACKEND_FAILURE_THRESHOLD: '1',
      BACKEND_FAILURE_COOLDOWN: '1h',
      BACKEND_FAILURE_MODE: 'allow',
    },
  }),
  scenario({ name: 'redis, 3 descriptors', bodies: three }),
  scenario({ name: 'redis, 10,000 distinct keys', bodies: distinct }),
  // Redis modes: compared with the single-Redis row of the same traffic, round by round.
  scenario({
    name: 'sentinel, 1 descriptor',
    backend: 'sentinel',
    bodies: one,
    baseline: 'redis, 1 descriptor',
  }),
  scenario({
    name: 'cluster, 1 descriptor',
    backend: 'cluster',
    bodies: one,
    baseline: 'redis, 1 descriptor',
  }),
  scenario({
    name: 'cluster, 3 descriptors',
    backend: 'cluster',
    bodies: three,
    baseline: 'redis, 3 descriptors',
  }),
  scenario({
    name: 'cluster, 10,000 distinct keys',
    backend: 'cluster',
    bodies: distinct,
    baseline: 'redis, 10,000 distinct keys',
  }),
  // The over-limit rows record no refusals, as before the ring existed; the rows after each
  // keep the last 1000 (DEBUG_RECENT_DECISIONS' default): the difference is the ring's cost.
  scenario({
    name: 'redis, over limit, no local cache',
    bodies: blocked,
    expect: 'OVER_LIMIT',
    env: { DEBUG_RECENT_DECISIONS: '0' },
  }),
  scenario({
    name: 'redis, over limit, no local cache, recording',
    bodies: blocked,
    expect: 'OVER_LIMIT',
    env: { DEBUG_RECENT_DECISIONS: '1000' },
  }),
  scenario({
    name: 'redis, over limit, local cache',
    bodies: blocked,
    expect: 'OVER_LIMIT',
    env: { LOCAL_CACHE_SIZE_IN_BYTES: '1048576', DEBUG_RECENT_DECISIONS: '0' },
  }),
  scenario({
    name: 'redis, over limit, local cache, recording',
    bodies: blocked,
    expect: 'OVER_LIMIT',
    env: { LOCAL_CACHE_SIZE_IN_BYTES: '1048576', DEBUG_RECENT_DECISIONS: '1000' },
  }),
  scenario({ name: 'memcached, 1 descriptor', backend: 'memcache', bodies: one }),
  scenario({
    name: 'memcached, 1 descriptor @16',
    backend: 'memcache',
    concurrency: 16,
    bodies: one,
  }),
  scenario({ name: 'memcached, 3 descriptors', backend: 'memcache', bodies: three }),
  scenario({ name: 'memcached, 10,000 distinct keys', backend: 'memcache', bodies: distinct }),
  scenario({ name: 'memory, 1 descriptor', backend: 'memory', bodies: one }),
  scenario({ name: 'memory, 1 descriptor @16', backend: 'memory', concurrency: 16, bodies: one }),
  scenario({
    name: 'memory, 1 descriptor, grpc-timeout',
    backend: 'memory',
    bodies: one,
    grpcTimeout: ENVOY_LIKE_TIMEOUT,
    baseline: 'memory, 1 descriptor',
  }),
  ...algorithmRows('memory'),
  // Tracing off is the row above; these send spans to an OTLP/HTTP sink that drops them.
  scenario({
    name: 'memory, 1 descriptor, tracing on, sampling 0',
    backend: 'memory',
    bodies: one,
    env: { TRACING_ENABLED: 'true', TRACING_SAMPLING_RATE: '0' },
  }),
  scenario({
    name: 'memory, 1 descriptor, tracing on, sampling 1',
    backend: 'memory',
    bodies: one,
    env: { TRACING_ENABLED: 'true', TRACING_SAMPLING_RATE: '1' },
  }),
  scenario({
    name: 'http /json, redis, 1 descriptor',
    kind: 'http',
    bodies: one,
    expect: 'http-200',
  }),
  ...prefixRows(),
];
