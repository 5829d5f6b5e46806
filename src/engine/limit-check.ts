// The seam between the engine's request steps and one algorithm's decision for one descriptor.
import type { MatchedLimit, RuleLimit } from '../config';
import type { LimiterSettings } from '../settings';
import type { CounterRead } from '../store';
import type { OverLimitCache } from './local-cache';
import type { RecentDecisions } from './recent-decisions';
import type { StoreBatch, StoreResults } from './store-batch';
import type { RuleStats } from '../stats';
import type { DescriptorStatus, RequestDescriptor } from './types';

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

/** What a check of one limit is planned from. */
export interface CheckInput {
  readonly matched: MatchedLimit;
  /** The limit counted: one of `matched.rule.limits`. */
  readonly limit: RuleLimit;
  /** That limit's statistics. */
  readonly stats: RuleStats;
  readonly descriptor: RequestDescriptor;
  readonly hits: number;
  readonly domain: string;
  readonly nowMs: number;
}

/** One limit's outcome, for headers that describe every limit of a request (IETF format). */
export interface LimitReport {
  readonly limit: RuleLimit;
  readonly status: DescriptorStatus;
}

/**
 * One descriptor counted against its limits. The engine calls it in request order: planned
 * (created), maybe held back, added to the store batch, then asked for its status once the
 * store answered. An algorithm is a class behind this interface (fixed-window.ts,
 * sliding-window.ts, token-bucket.ts); several limits on one descriptor are one more
 * (multi-limit.ts) holding a check per limit. The steps do not change.
 */
export interface LimitCheck {
  readonly kind: 'check';
  readonly limit: MatchedLimit;
  /** The hits the request asks for (subtracted when `isNegative`). */
  readonly hits: number;
  /** A refund (is_negative_hits): subtracts, never fails the request. */
  readonly isNegative: boolean;
  /** Known over a limit from the local cache: that limit is answered without the store. */
  readonly isOverInLocalCache: boolean;
  /** What STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT reads before counting (none when cached over). */
  toRead(): readonly CounterRead[];
  /**
   * For each limit, whether the request's hits on top of `current` (the values of toRead(), in
   * order) would take it over.
   */
  exceeding(current: readonly number[]): readonly boolean[];
  /**
   * Sends 0 hits instead of the request's for every limit not flagged in `exceeding`, or for
   * all when it is undefined (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT).
   */
  holdBack(exceeding: readonly boolean[] | undefined): void;
  /** Appends this check's changes to the store batch, unless it needs no store. */
  addTo(batch: StoreBatch): void;
  /** The status from the store's results; adds the rule statistics. */
  status(results: StoreResults, env: CheckEnv): DescriptorStatus;
  /** Every limit's own status, once status() has run. */
  reports(): readonly LimitReport[];
}

/** A descriptor the store is not asked about: no limit applies, or its rule is unlimited. */
export interface NotCounted {
  readonly kind: 'no-limit' | 'unlimited';
  readonly status: DescriptorStatus;
}

/** What the engine works out for one descriptor before talking to the store. */
export type DescriptorPlan = LimitCheck | NotCounted;
