// The sliding-window decision for one limit: the previous and current fixed-window counters,
// weighted by how far the current window has run.
import type { DescriptorEntry, MatchedLimit, RuleLimit, Unit } from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterRead } from '../store';
import {
  countedStatus,
  judgeHits,
  overInLocalCache,
  recordOver,
  refundStatus,
} from './check-parts';
import { fixedWindowKey } from './fixed-window';
import type { CheckEnv, CheckInput } from './limit-check';
import { OneLimitCheck } from './one-limit-check';
import type { StoreBatch, StoreResults } from './store-batch';
import type { DescriptorStatus } from './types';
import { windowOf, type Window } from './windows';

/** `previous × (1 − elapsed/W) + current`: the count of the window ending now, estimated. */
export function slidingEstimate(
  previous: number,
  current: number,
  elapsedFraction: number,
): number {
  return previous * (1 - elapsedFraction) + current;
}

/**
 * Whole seconds from now during which not even one more hit could be admitted, counting no
 * further hits: the local over-limit cache may answer for that long without being wrong.
 * `elapsedMs` into a window of `windowMs`.
 */
export function secondsUntilAdmits(
  previous: number,
  current: number,
  limit: number,
  elapsedMs: number,
  windowMs: number,
): number {
  // Within this window the estimate falls as the previous window's weight does.
  if (current + 1 <= limit) {
    if (previous <= 0) return 0;
    const at = windowMs * (1 - (limit - 1 - current) / previous);
    return Math.max(0, Math.floor((at - elapsedMs) / 1000));
  }
  // Not before the next window, where this window's count is the previous one.
  const into = current <= 0 ? 0 : Math.max(0, windowMs * (1 - (limit - 1) / current));
  return Math.floor((windowMs - elapsedMs + into) / 1000);
}

/** Where `nowMs` sits: the current window, how far it has run, and the previous window's start. */
export interface SlidingPosition {
  readonly window: Window;
  readonly previous: Window;
  readonly windowMs: number;
  readonly elapsedMs: number;
  /** The current window's key lives through the next window too, read there as the previous. */
  readonly ttlSeconds: number;
}

export function slidingPositionOf(
  unit: Unit,
  nowMs: number,
  useCalendarMonth: boolean,
): SlidingPosition {
  const nowSeconds = Math.floor(nowMs / 1000);
  const window = windowOf(unit, nowSeconds, useCalendarMonth);
  const lengthSeconds = nowSeconds - window.startSeconds + window.resetSeconds;
  const next = windowOf(unit, window.startSeconds + lengthSeconds, useCalendarMonth);
  return {
    window,
    previous: windowOf(unit, window.startSeconds - 1, useCalendarMonth),
    windowMs: lengthSeconds * 1000,
    elapsedMs: nowMs - window.startSeconds * 1000,
    ttlSeconds: window.expirySeconds + next.resetSeconds,
  };
}

/** The keys of the current and previous windows: each the fixed-window key of its window. */
export function slidingWindowKeys(
  matched: MatchedLimit,
  limit: RuleLimit,
  domain: string,
  entries: readonly DescriptorEntry[],
  position: SlidingPosition,
  settings: LimiterSettings,
): { readonly current: string; readonly previous: string } {
  const key = (window: Window): string =>
    fixedWindowKey(matched, limit, domain, entries, window, settings);
  return { current: key(position.window), previous: key(position.previous) };
}

/**
 * Counts hits as the fixed window does, on the fixed-window keys of each window, and decides on
 * the estimate. The current window's key lives through the next window too, where it is read as
 * the previous one.
 */
export class SlidingWindowCheck extends OneLimitCheck {
  private readonly window: Window;
  private readonly previousKey: string;
  private readonly elapsedMs: number;
  private readonly windowMs: number;
  private readonly ttlSeconds: number;

  constructor(input: CheckInput, env: CheckEnv) {
    const position = slidingPositionOf(
      input.limit.unit,
      input.nowMs,
      env.settings.useCalendarMonth,
    );
    const keys = slidingWindowKeys(
      input.matched,
      input.limit,
      input.domain,
      input.descriptor.entries,
      position,
      env.settings,
    );
    super(input, env, keys.current);
    this.previousKey = keys.previous;
    this.window = position.window;
    this.windowMs = position.windowMs;
    this.elapsedMs = position.elapsedMs;
    this.ttlSeconds = position.ttlSeconds;
  }

  private estimate(previous: number, current: number): number {
    return slidingEstimate(previous, current, this.elapsedMs / this.windowMs);
  }

  override toRead(): readonly CounterRead[] {
    if (this.isOverInLocalCache) return [];
    return [
      { key: this.key, isPerSecond: this.isPerSecond },
      { key: this.previousKey, isPerSecond: this.isPerSecond },
    ];
  }

  exceeding(current: readonly number[]): readonly boolean[] {
    if (this.isOverInLocalCache) return [true];
    const estimate = this.estimate(current[1] ?? 0, current[0] ?? 0);
    return [estimate + this.hits > this.rule.requestsPerUnit];
  }

  addTo(batch: StoreBatch): void {
    if (this.isOverInLocalCache) return;
    this.batchIndex = batch.slidingWindows.length;
    batch.slidingWindows.push({
      current: {
        key: this.key,
        hits: this.sentHits,
        ttlSeconds: this.ttlSeconds + batch.ttlJitterSeconds(),
        isPerSecond: this.isPerSecond,
        isNegative: this.isNegative,
      },
      previousKey: this.previousKey,
    });
  }

  protected decide(results: StoreResults, env: CheckEnv): DescriptorStatus {
    const reset = this.window.resetSeconds;
    if (this.isOverInLocalCache) return overInLocalCache(this.input, env, reset);
    const counts = results.slidingWindows[this.batchIndex] ?? { previous: 0, current: 0 };
    const max = this.rule.requestsPerUnit;
    // The estimate in whole hits: over the limit exactly when the estimate itself is.
    const after = Math.ceil(this.estimate(counts.previous, counts.current));
    if (this.isNegative) return refundStatus(this.rule, Math.max(0, max - after), reset);
    const c = judgeHits(this.input, env, max, after - this.hits, after);
    if (c.isOverLimit) recordOver(env, this.input, Math.max(0, max - after), false);
    if (c.isOverLimit && Number.isFinite(after)) {
      const seconds = secondsUntilAdmits(
        counts.previous,
        counts.current,
        max,
        this.elapsedMs,
        this.windowMs,
      );
      // Keyed by this window: the next window asks the store again, whatever was cached.
      if (seconds >= 1) env.localCache?.add(this.key, Math.min(seconds, reset));
    }
    return countedStatus(this.limit, this.rule, c.isOverLimit, Math.max(0, max - after), reset);
  }
}
