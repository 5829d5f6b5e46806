// The fixed-window decision for one descriptor: its key and window, the store change it asks
// for, and what the counter after that change means (status and rule statistics).
import type { DescriptorQuery, MatchedLimit, Unit } from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterIncrement, CounterRead } from '../store';
import { cacheKey } from './cache-key';
import { classify } from './decide';
import type { CheckEnv, LimitCheck } from './limit-check';
import type { CurrentLimit, DescriptorStatus, RequestDescriptor } from './types';
import { windowOf, type Window } from './windows';

/** A counter per window of the rule's unit, keyed in the reference's format. */
export class FixedWindowCheck implements LimitCheck {
  readonly kind = 'check';
  readonly isNegative: boolean;
  readonly isOverInLocalCache: boolean;
  private readonly window: Window;
  private readonly key: string;
  /** Hits sent to the store: the request's, or 0 when held back. */
  private sentHits: number;
  /** Position of this check's change in the store batch, or -1 when it sent none. */
  private batchIndex = -1;

  /** Plans the check and counts the request's hits as total (or total negative) hits. */
  constructor(
    readonly limit: MatchedLimit,
    private readonly unit: Unit,
    private readonly descriptor: RequestDescriptor,
    readonly hits: number,
    private readonly domain: string,
    nowSeconds: number,
    env: CheckEnv,
  ) {
    this.window = windowOf(unit, nowSeconds, env.settings.useCalendarMonth);
    this.key = fixedWindowKey(limit, domain, descriptor, this.window, env.settings);
    this.isNegative = descriptor.isNegativeHits;
    this.sentHits = hits;
    if (this.isNegative) {
      limit.stats.totalNegativeHits.add(hits);
      this.isOverInLocalCache = false;
    } else {
      limit.stats.totalHits.add(hits);
      this.isOverInLocalCache = env.localCache?.has(this.key) === true;
    }
  }

  toRead(): CounterRead {
    return { key: this.key, isPerSecond: this.unit === 'SECOND' };
  }

  wouldExceed(current: number): boolean {
    return current + this.hits > this.limit.rule.requestsPerUnit;
  }

  holdBack(): void {
    this.sentHits = 0;
  }

  addTo(batch: CounterIncrement[], ttlJitterSeconds: () => number): void {
    if (this.isOverInLocalCache) return;
    this.batchIndex = batch.length;
    batch.push({
      key: this.key,
      hits: this.sentHits,
      ttlSeconds: this.window.expirySeconds + ttlJitterSeconds(),
      isPerSecond: this.unit === 'SECOND',
      isNegative: this.isNegative,
    });
  }

  status(values: readonly number[], env: CheckEnv): DescriptorStatus {
    const rule = this.limit.rule;
    const currentLimit = {
      requestsPerUnit: rule.requestsPerUnit,
      unit: this.unit,
      name: rule.name,
    };
    if (this.isOverInLocalCache) return this.overInLocalCache(currentLimit, env);
    const after = values[this.batchIndex] ?? 0;
    if (this.isNegative) {
      // A refund never fails a request and has no over-limit side effects.
      return {
        code: 'OK',
        currentLimit,
        limitRemaining: Math.max(0, rule.requestsPerUnit - after),
        durationUntilResetSeconds: this.window.resetSeconds,
      };
    }
    return this.counted(after, currentLimit, env);
  }

  private overInLocalCache(currentLimit: CurrentLimit, env: CheckEnv): DescriptorStatus {
    const { isShadow } = this.limit.rule;
    const stats = this.limit.stats;
    stats.overLimit.add(this.hits);
    stats.overLimitWithLocalCache.add(this.hits);
    if (isShadow) stats.shadowMode.add(this.hits);
    this.record(env, 0, true);
    return {
      code: isShadow ? 'OK' : 'OVER_LIMIT',
      currentLimit,
      limitRemaining: 0,
      durationUntilResetSeconds: this.window.resetSeconds,
    };
  }

  /** Near/over/within split of the hits; an over-limit key goes into the local cache. */
  private counted(after: number, currentLimit: CurrentLimit, env: CheckEnv): DescriptorStatus {
    const rule = this.limit.rule;
    const stats = this.limit.stats;
    const reset = this.window.resetSeconds;
    // Held-back hits (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) split near/over as if they had
    // landed on the unchanged value, as the reference's statistics do.
    const c = classify(
      rule.requestsPerUnit,
      after - this.hits,
      after,
      this.hits,
      env.settings.nearLimitRatio,
      rule.isShadow,
    );
    if (c.nearLimitHits > 0) stats.nearLimit.add(c.nearLimitHits);
    if (c.overLimitHits > 0) stats.overLimit.add(c.overLimitHits);
    if (c.withinLimitHits > 0) stats.withinLimit.add(c.withinLimitHits);
    if (c.shadowHits > 0) stats.shadowMode.add(c.shadowHits);
    if (c.isOverLimit) {
      env.localCache?.add(this.key, reset);
      this.record(env, c.limitRemaining, false);
    }
    return {
      code: c.isOverLimit && !rule.isShadow ? 'OVER_LIMIT' : 'OK',
      currentLimit,
      limitRemaining: c.limitRemaining,
      durationUntilResetSeconds: reset,
    };
  }

  /** Keeps this over-limit decision for the debug listener, when it keeps any. */
  private record(env: CheckEnv, remaining: number, isFromLocalCache: boolean): void {
    env.recentDecisions?.record({
      domain: this.domain,
      entries: this.descriptor.entries,
      limit: this.limit,
      hits: this.hits,
      remaining,
      isShadow: this.limit.rule.isShadow || env.settings.globalShadowMode,
      isFromLocalCache,
    });
  }
}

/** The key of the counter a descriptor feeds under a fixed-window limit in `window`. */
export function fixedWindowKey(
  limit: MatchedLimit,
  domain: string,
  descriptor: DescriptorQuery,
  window: Window,
  settings: LimiterSettings,
): string {
  return cacheKey(
    settings.cacheKeyPrefix,
    domain,
    descriptor.entries,
    limit.sharedValues,
    window.startSeconds,
  );
}
