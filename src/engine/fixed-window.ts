// The fixed-window decision for one limit of a descriptor: its key and window, the store change
// it asks for, and what the counter after that change means (status and rule statistics).
import type { DescriptorEntry, MatchedLimit, RuleLimit } from '../config';
import type { LimiterSettings } from '../settings';
import type { RuleStats } from '../stats';
import type { CounterRead } from '../store';
import { cacheKey } from './cache-key';
import {
  countedStatus,
  countRequest,
  judgeHits,
  overInLocalCache,
  recordOver,
  refundStatus,
} from './check-parts';
import type { CheckEnv, CheckInput, LimitCheck, LimitReport } from './limit-check';
import type { StoreBatch, StoreResults } from './store-batch';
import type { DescriptorStatus } from './types';
import { windowOf, type Window } from './windows';

/** A counter per window of the limit's unit, keyed in the reference's format. */
export class FixedWindowCheck implements LimitCheck {
  readonly kind = 'check';
  readonly limit: MatchedLimit;
  readonly hits: number;
  readonly isNegative: boolean;
  readonly isOverInLocalCache: boolean;
  private readonly input: CheckInput;
  private readonly rule: RuleLimit;
  private readonly stats: RuleStats;
  private readonly window: Window;
  private readonly key: string;
  /** Hits sent to the store: the request's, or 0 when held back. */
  private sentHits: number;
  /** Position of this check's change in the store batch, or -1 when it sent none. */
  private batchIndex = -1;
  private result: DescriptorStatus | undefined;

  /** Plans the check and counts the request's hits as total (or total negative) hits. */
  constructor(input: CheckInput, env: CheckEnv) {
    const settings = env.settings;
    this.input = input;
    this.limit = input.matched;
    this.rule = input.limit;
    this.stats = input.stats;
    this.hits = input.hits;
    this.window = windowOf(
      this.rule.unit,
      Math.floor(input.nowMs / 1000),
      settings.useCalendarMonth,
    );
    this.key = fixedWindowKey(
      input.matched,
      this.rule,
      input.domain,
      input.descriptor.entries,
      this.window,
      settings,
    );
    this.isNegative = input.descriptor.isNegativeHits;
    this.sentHits = input.hits;
    countRequest(this.stats, input.hits, this.isNegative);
    this.isOverInLocalCache = !this.isNegative && env.localCache?.has(this.key) === true;
  }

  toRead(): readonly CounterRead[] {
    if (this.isOverInLocalCache) return [];
    return [{ key: this.key, isPerSecond: this.rule.unit === 'SECOND' }];
  }

  exceeding(current: readonly number[]): readonly boolean[] {
    if (this.isOverInLocalCache) return [true];
    return [(current[0] ?? 0) + this.hits > this.rule.requestsPerUnit];
  }

  holdBack(exceeding: readonly boolean[] | undefined): void {
    if (exceeding?.[0] !== true) this.sentHits = 0;
  }

  addTo(batch: StoreBatch): void {
    if (this.isOverInLocalCache) return;
    this.batchIndex = batch.increments.length;
    batch.increments.push({
      key: this.key,
      hits: this.sentHits,
      ttlSeconds: this.window.expirySeconds + batch.ttlJitterSeconds(),
      isPerSecond: this.rule.unit === 'SECOND',
      isNegative: this.isNegative,
    });
  }

  status(results: StoreResults, env: CheckEnv): DescriptorStatus {
    this.result = this.decide(results, env);
    return this.result;
  }

  reports(): readonly LimitReport[] {
    return this.result === undefined ? [] : [{ limit: this.rule, status: this.result }];
  }

  private decide(results: StoreResults, env: CheckEnv): DescriptorStatus {
    const reset = this.window.resetSeconds;
    if (this.isOverInLocalCache) return overInLocalCache(this.input, env, reset);
    const after = results.increments[this.batchIndex] ?? 0;
    const max = this.rule.requestsPerUnit;
    if (this.isNegative) return refundStatus(this.rule, Math.max(0, max - after), reset);
    // Held-back hits (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) split near/over as if they had
    // landed on the unchanged value, as the reference's statistics do.
    const c = judgeHits(this.input, env, max, after - this.hits, after);
    if (c.isOverLimit) recordOver(env, this.input, c.limitRemaining, false);
    // A store's Infinity is an answer, not a count (an open circuit breaker's deny): never cached.
    if (c.isOverLimit && Number.isFinite(after)) env.localCache?.add(this.key, reset);
    return countedStatus(this.limit, this.rule, c.isOverLimit, c.limitRemaining, reset);
  }
}

/** The key of the counter a descriptor feeds under a fixed-window limit in `window`. */
export function fixedWindowKey(
  matched: MatchedLimit,
  limit: RuleLimit,
  domain: string,
  entries: readonly DescriptorEntry[],
  window: Window,
  settings: LimiterSettings,
): string {
  return (
    cacheKey(settings.cacheKeyPrefix, domain, entries, matched.sharedValues, window.startSeconds) +
    limit.keySuffix
  );
}
