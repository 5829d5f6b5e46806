// What operators ask of the engine: each rule's limits by algorithm, and the counters a
// descriptor feeds read without counting (the debug listener's /counters and /rules).
import type {
  Algorithm,
  ConfigSnapshot,
  DescriptorEntry,
  MatchedLimit,
  RateLimitRule,
  RuleLimit,
  Unit,
} from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterRead, CounterStore } from '../store';
import { fixedWindowKey } from './fixed-window';
import type { OverLimitCache } from './local-cache';
import { slidingEstimate, slidingPositionOf, slidingWindowKeys } from './sliding-window';
import { bucketOf, secondsUntilFull, tokenBucketKey, tokensLeft } from './token-bucket';
import { windowOf } from './windows';

export type { Algorithm } from '../config';

/** One limit of a rule. */
export interface LimitDescription {
  readonly algorithm: Algorithm;
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly name: string | undefined;
  /** The bucket's size in hits; undefined for the window algorithms. */
  readonly burst: number | undefined;
}

/** A sliding window's other half: the previous window's counter, and the estimate decided on. */
export interface SlidingReading {
  readonly previousKey: string;
  readonly previousCount: number;
  /** `previous × (1 − elapsed/W) + current`, as a request now would weigh it. */
  readonly estimate: number;
}

/**
 * One limit's counter for one descriptor, as the store holds it now. For a token bucket, `count`
 * is the hits in use (burst − remaining) and the "window" runs from now until the bucket is full.
 */
export interface CounterReading extends LimitDescription {
  readonly key: string;
  /** The store's value, read without incrementing (0 for a key not there). */
  readonly count: number;
  readonly remaining: number;
  readonly windowStartSeconds: number;
  /** Unix seconds at which this window ends and the next one starts from 0. */
  readonly windowEndSeconds: number;
  /** Whole seconds until then. */
  readonly resetSeconds: number;
  /** The local over-limit cache answers this key without the store until the window ends. */
  readonly isInLocalCache: boolean;
  /** Sliding windows only. */
  readonly sliding: SlidingReading | undefined;
  /** Token buckets only: the theoretical arrival time in Unix microseconds (0: a full bucket). */
  readonly tatUs: number | undefined;
}

/** What one descriptor matched and what its counters hold. */
export interface DescriptorReading {
  readonly entries: readonly DescriptorEntry[];
  /** The rule the descriptor matches; undefined when none does. */
  readonly rule: RateLimitRule | undefined;
  /** One per limit of the rule; empty for an unlimited rule or no match. */
  readonly counters: readonly CounterReading[];
}

export type CounterLookup =
  | { readonly ok: true; readonly domain: string; readonly descriptors: DescriptorReading[] }
  | { readonly ok: false; readonly reason: 'no-config' | 'unknown-domain' };

export function describeLimit(limit: RuleLimit): LimitDescription {
  return {
    algorithm: limit.algorithm,
    requestsPerUnit: limit.requestsPerUnit,
    unit: limit.unit,
    name: limit.name,
    burst: limit.algorithm === 'token_bucket' ? limit.burst : undefined,
  };
}

/** The limits a rule enforces, in order; none for an unlimited rule. */
export function limitsOf(rule: RateLimitRule): LimitDescription[] {
  return rule.limits.map(describeLimit);
}

/** What reading counters needs from the engine. */
export interface InspectEnv {
  readonly store: CounterStore;
  readonly settings: LimiterSettings;
  readonly localCache: OverLimitCache | undefined;
}

/** One limit's keys to read, and what their values mean. */
interface PlannedCounter {
  readonly reads: readonly CounterRead[];
  reading(values: readonly number[]): CounterReading;
}

interface LimitQuery {
  readonly match: MatchedLimit;
  readonly limit: RuleLimit;
  readonly domain: string;
  readonly entries: readonly DescriptorEntry[];
  readonly nowMs: number;
}

/** What every algorithm's reading shares, from its key and window. */
type BaseReading = Omit<CounterReading, 'count' | 'remaining'>;

interface CounterContext {
  readonly q: LimitQuery;
  readonly env: InspectEnv;
  readonly nowSeconds: number;
  readonly read: (key: string) => CounterRead;
  readonly base: (key: string, resetSeconds: number, startSeconds: number) => BaseReading;
}

function slidingCounter({ q, env, read, base }: CounterContext): PlannedCounter {
  const { limit } = q;
  const { settings } = env;
  const position = slidingPositionOf(limit.unit, q.nowMs, settings.useCalendarMonth);
  const keys = slidingWindowKeys(q.match, limit, q.domain, q.entries, position, settings);
  const { resetSeconds, startSeconds } = position.window;
  return {
    reads: [read(keys.current), read(keys.previous)],
    reading: ([count = 0, previousCount = 0]) => {
      const estimate = slidingEstimate(
        previousCount,
        count,
        position.elapsedMs / position.windowMs,
      );
      return {
        ...base(keys.current, resetSeconds, startSeconds),
        count,
        remaining: Math.max(0, limit.requestsPerUnit - Math.ceil(estimate)),
        sliding: { previousKey: keys.previous, previousCount, estimate },
      };
    },
  };
}

function bucketCounter({ q, env, nowSeconds, read, base }: CounterContext): PlannedCounter {
  const key = tokenBucketKey(q.match, q.limit, q.domain, q.entries, env.settings);
  const bucket = bucketOf(q.limit);
  const nowUs = Math.round(q.nowMs * 1000);
  return {
    reads: [read(key)],
    reading: ([tatUs = 0]) => {
      const left = tokensLeft(bucket, tatUs, nowUs);
      return {
        ...base(key, secondsUntilFull(tatUs, nowUs), nowSeconds),
        count: q.limit.burst - left,
        remaining: left,
        tatUs,
      };
    },
  };
}

function fixedCounter({ q, env, nowSeconds, read, base }: CounterContext): PlannedCounter {
  const window = windowOf(q.limit.unit, nowSeconds, env.settings.useCalendarMonth);
  const key = fixedWindowKey(q.match, q.limit, q.domain, q.entries, window, env.settings);
  return {
    reads: [read(key)],
    reading: ([count = 0]) => ({
      ...base(key, window.resetSeconds, window.startSeconds),
      count,
      remaining: Math.max(0, q.limit.requestsPerUnit - count),
    }),
  };
}

/** The keys a request at `nowMs` would count under for one limit, by its algorithm. */
function planLimit(q: LimitQuery, env: InspectEnv): PlannedCounter {
  const described = describeLimit(q.limit);
  const isPerSecond = q.limit.unit === 'SECOND';
  const nowSeconds = Math.floor(q.nowMs / 1000);
  const context: CounterContext = {
    q,
    env,
    nowSeconds,
    read: (key) => ({ key, isPerSecond }),
    base: (key, resetSeconds, startSeconds) => ({
      ...described,
      key,
      windowStartSeconds: startSeconds,
      windowEndSeconds: nowSeconds + resetSeconds,
      resetSeconds,
      isInLocalCache: env.localCache?.has(key) === true,
      sliding: undefined,
      tatUs: undefined,
    }),
  };
  switch (q.limit.algorithm) {
    case 'sliding_window':
      return slidingCounter(context);
    case 'token_bucket':
      return bucketCounter(context);
    case 'fixed_window':
      return fixedCounter(context);
  }
}

interface Planned {
  readonly entries: readonly DescriptorEntry[];
  readonly rule: RateLimitRule | undefined;
  readonly counters: readonly PlannedCounter[];
}

/** Each descriptor's rule and counter keys, as a request at `nowMs` would count them. */
function plan(
  snapshot: ConfigSnapshot,
  domain: string,
  descriptors: readonly (readonly DescriptorEntry[])[],
  nowMs: number,
  env: InspectEnv,
): Planned[] {
  return descriptors.map((entries) => {
    const match = snapshot.findLimit(domain, { entries, limit: undefined });
    if (match === undefined) return { entries, rule: undefined, counters: [] };
    const counters = match.rule.limits.map((limit) =>
      planLimit({ match, limit, domain, entries, nowMs }, env),
    );
    return { entries, rule: match.rule, counters };
  });
}

/**
 * Reads the counters each descriptor feeds, in one store call, without changing them. Each
 * descriptor is matched alone: `replaces` between descriptors of one request does not apply.
 * Rejects with the store's error when the backend fails.
 */
export async function readCounters(
  snapshot: ConfigSnapshot | undefined,
  domain: string,
  descriptors: readonly (readonly DescriptorEntry[])[],
  nowMs: number,
  env: InspectEnv,
): Promise<CounterLookup> {
  if (snapshot === undefined) return { ok: false, reason: 'no-config' };
  if (!snapshot.hasDomain(domain)) return { ok: false, reason: 'unknown-domain' };
  const planned = plan(snapshot, domain, descriptors, nowMs, env);
  const reads = planned.flatMap((p) => p.counters.flatMap((c) => c.reads));
  const values = reads.length === 0 ? [] : await env.store.read(reads);
  let next = 0;
  const readings = planned.map(({ entries, rule, counters }) => ({
    entries,
    rule,
    counters: counters.map((counter) => {
      const mine = values.slice(next, next + counter.reads.length);
      next += counter.reads.length;
      return counter.reading(mine);
    }),
  }));
  return { ok: true, domain, descriptors: readings };
}
