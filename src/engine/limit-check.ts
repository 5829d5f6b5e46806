// The seam between the engine's request steps and one algorithm's decision for one descriptor.
import type { MatchedLimit } from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterIncrement, CounterRead } from '../store';
import type { OverLimitCache } from './local-cache';
import type { RecentDecisions } from './recent-decisions';
import type { DescriptorStatus } from './types';

/** What a check reads besides its own state; one object for the engine's lifetime. */
export interface CheckEnv {
  readonly settings: LimiterSettings;
  /** The local over-limit cache; undefined when LOCAL_CACHE_SIZE_IN_BYTES is 0. */
  readonly localCache: OverLimitCache | undefined;
  /**
   * Where a check records a descriptor it finds over its limit (DEBUG_RECENT_DECISIONS);
   * undefined when that is off. Only over-limit branches touch it.
   */
  readonly recentDecisions: RecentDecisions | undefined;
}

/**
 * One descriptor counted against one limit by one algorithm (today the fixed window). The
 * engine calls it in request order: planned (created), maybe held back, added to the store
 * batch, then asked for its status once the store answered. Another algorithm is another
 * class behind this interface; the steps do not change.
 */
export interface LimitCheck {
  readonly kind: 'check';
  readonly limit: MatchedLimit;
  /** The hits the request asks for (subtracted when `isNegative`). */
  readonly hits: number;
  /** A refund (is_negative_hits): subtracts, never fails the request. */
  readonly isNegative: boolean;
  /** Known over its limit from the local cache: answered without the store. */
  readonly isOverInLocalCache: boolean;
  /** What STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT reads before counting. */
  toRead(): CounterRead;
  /** Whether the request's hits on top of `current` would take it over its limit. */
  wouldExceed(current: number): boolean;
  /** Sends 0 hits instead of the request's (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT). */
  holdBack(): void;
  /** Appends this check's change to the store batch, unless it needs no store. */
  addTo(batch: CounterIncrement[], ttlJitterSeconds: () => number): void;
  /** The status from the batch's values after the change; adds the rule statistics. */
  status(values: readonly number[], env: CheckEnv): DescriptorStatus;
}

/** A descriptor the store is not asked about: no limit applies, or its rule is unlimited. */
export interface NotCounted {
  readonly kind: 'no-limit' | 'unlimited';
  readonly status: DescriptorStatus;
}

/** What the engine works out for one descriptor before talking to the store. */
export type DescriptorPlan = LimitCheck | NotCounted;
