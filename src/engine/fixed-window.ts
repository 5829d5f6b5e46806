// The fixed-window decision for one limit of a descriptor: its key and window, the store change
// it asks for, and what the counter after that change means (status and rule statistics).
import type { DescriptorEntry, MatchedLimit, RuleLimit } from '../config';
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
import { windowOf, type Window } from './windows';

/** A counter per window of the limit's unit, keyed in the reference's format. */
export class FixedWindowCheck extends OneLimitCheck {
  private readonly window: Window;

  constructor(input: CheckInput, env: CheckEnv) {
    const window = windowOf(
      input.limit.unit,
      Math.floor(input.nowMs / 1000),
      env.settings.useCalendarMonth,
    );
    const key = fixedWindowKey(
      input.matched,
      input.limit,
      input.domain,
      input.descriptor.entries,
      window,
      env.settings,
    );
    super(input, env, key);
    this.window = window;
  }

  exceeding(current: readonly number[]): readonly boolean[] {
    if (this.isOverInLocalCache) return [true];
    return [(current[0] ?? 0) + this.hits > this.rule.requestsPerUnit];
  }

  addTo(batch: StoreBatch): void {
    if (this.isOverInLocalCache) return;
    this.batchIndex = batch.increments.length;
    batch.increments.push({
      key: this.key,
      hits: this.sentHits,
      ttlSeconds: this.window.expirySeconds + batch.ttlJitterSeconds(),
      isPerSecond: this.isPerSecond,
      isNegative: this.isNegative,
    });
  }

  protected decide(results: StoreResults, env: CheckEnv): DescriptorStatus {
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
