// The token bucket (GCRA) decision for one limit: one key holds the theoretical arrival time.
import { UNIT_SECONDS, type DescriptorEntry, type MatchedLimit, type RuleLimit } from '../config';
import type { LimiterSettings } from '../settings';
import { cacheKey } from './cache-key';
import {
  countedStatus,
  judgeHits,
  overInLocalCache,
  recordOver,
  refundStatus,
} from './check-parts';
import type { CheckEnv, CheckInput } from './limit-check';
import { OneLimitCheck } from './one-limit-check';
import type { StoreBatch, StoreResults } from './store-batch';
import type { DescriptorStatus } from './types';

/** The bucket's arithmetic in whole microseconds, as every backend runs it. */
export interface Bucket {
  /** The time one hit costs: the unit over requests_per_unit, rounded up. */
  readonly emissionUs: number;
  /** burst × emissionUs: how far the TAT may run ahead of now. */
  readonly toleranceUs: number;
}

export function bucketOf(limit: RuleLimit): Bucket {
  const emissionUs = Math.ceil((UNIT_SECONDS[limit.unit] * 1e6) / limit.requestsPerUnit);
  return { emissionUs, toleranceUs: limit.burst * emissionUs };
}

/** Hits admissible at `nowUs` with the TAT at `tatUs`: whole tokens left in the bucket. */
export function tokensLeft(bucket: Bucket, tatUs: number, nowUs: number): number {
  const ahead = Math.max(tatUs, nowUs) - nowUs;
  return Math.max(0, Math.floor((bucket.toleranceUs - ahead) / bucket.emissionUs));
}

/** Whole seconds from `nowUs` until the bucket whose TAT is `tatUs` is full again. */
export function secondsUntilFull(tatUs: number, nowUs: number): number {
  return Math.ceil(Math.max(0, tatUs - nowUs) / 1e6);
}

/** The one key of a bucket: no window, `<prefix><domain>_<entries>_tat_<unit>`. */
export function tokenBucketKey(
  matched: MatchedLimit,
  limit: RuleLimit,
  domain: string,
  entries: readonly DescriptorEntry[],
  settings: LimiterSettings,
): string {
  return cacheKey(
    settings.cacheKeyPrefix,
    domain,
    entries,
    matched.sharedValues,
    'tat',
    `_${limit.unit.toLowerCase()}`,
  );
}

/**
 * Counts against a bucket of `burst` hits that refills one hit every emission interval. A
 * request of n hits is admitted when `max(TAT, now) + n·T − now ≤ burst·T`; a refused request
 * does not move the TAT, so it costs nothing. The key carries no window:
 * `<prefix><domain>_<entries>_tat_<unit>`.
 */
export class TokenBucketCheck extends OneLimitCheck {
  private readonly bucket: Bucket;
  private readonly nowUs: number;

  constructor(input: CheckInput, env: CheckEnv) {
    const key = tokenBucketKey(
      input.matched,
      input.limit,
      input.domain,
      input.descriptor.entries,
      env.settings,
    );
    super(input, env, key);
    this.bucket = bucketOf(this.rule);
    this.nowUs = Math.round(input.nowMs * 1000);
  }

  exceeding(current: readonly number[]): readonly boolean[] {
    if (this.isOverInLocalCache) return [true];
    const tat = Math.max(current[0] ?? 0, this.nowUs);
    return [tat + this.hits * this.bucket.emissionUs - this.nowUs > this.bucket.toleranceUs];
  }

  addTo(batch: StoreBatch): void {
    if (this.isOverInLocalCache) return;
    this.batchIndex = batch.tokenBuckets.length;
    batch.tokenBuckets.push({
      key: this.key,
      hits: this.sentHits,
      nowUs: this.nowUs,
      emissionUs: this.bucket.emissionUs,
      toleranceUs: this.bucket.toleranceUs,
      isPerSecond: this.isPerSecond,
      isNegative: this.isNegative,
    });
  }

  protected decide(results: StoreResults, env: CheckEnv): DescriptorStatus {
    if (this.isOverInLocalCache) {
      const refill = Math.ceil(this.bucket.toleranceUs / 1e6);
      return overInLocalCache(this.input, env, refill);
    }
    const state = results.tokenBuckets[this.batchIndex] ?? { isAdmitted: true, tatUs: 0 };
    const left = tokensLeft(this.bucket, state.tatUs, this.nowUs);
    // An infinite TAT is a store's refusal that counted nothing (an open breaker's deny).
    const reset = Number.isFinite(state.tatUs)
      ? secondsUntilFull(state.tatUs, this.nowUs)
      : Math.ceil(this.bucket.toleranceUs / 1e6);
    if (this.isNegative) return refundStatus(this.rule, left, reset);
    // The bucket as a counter of hits in use, so near/over/within split as a window's do.
    const burst = this.rule.burst;
    const inUse = burst - left;
    const before = state.isAdmitted ? inUse - this.hits : inUse;
    judgeHits(this.input, env, burst, before, before + this.hits);
    if (!state.isAdmitted) recordOver(env, this.input, left, false);
    if (!state.isAdmitted && Number.isFinite(state.tatUs)) this.remember(state.tatUs, env);
    return countedStatus(this.limit, this.rule, !state.isAdmitted, left, reset);
  }

  /** Caches the key as over while not even one hit would be admitted. */
  private remember(tatUs: number, env: CheckEnv): void {
    const ahead = Math.max(tatUs, this.nowUs) - this.nowUs;
    const waitUs = ahead - (this.bucket.toleranceUs - this.bucket.emissionUs);
    const seconds = Math.floor(waitUs / 1e6);
    if (seconds >= 1) env.localCache?.add(this.key, seconds);
  }
}
