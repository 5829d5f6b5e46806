// The CounterStore seam: counts and expires, nothing else. Decisions are the engine's.
import type { Algorithm } from '../config';
import type { Pending } from '../lib/pending';

/** One counter change of a request. */
export interface CounterIncrement {
  readonly key: string;
  /** How much to add (or subtract for negative hits); 0 reads the value and refreshes the expiry. */
  readonly hits: number;
  /** Expiry to set on the key, whole seconds. */
  readonly ttlSeconds: number;
  /** True for keys of per-second limits, which may live on their own instance. */
  readonly isPerSecond: boolean;
  /** Subtract `hits` instead of adding them; the value never goes below 0. */
  readonly isNegative: boolean;
}

/** A key to read, for STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT. */
export interface CounterRead {
  readonly key: string;
  readonly isPerSecond: boolean;
}

/**
 * A sliding-window change: the current window's counter changes as a fixed window's would, and
 * the previous window's counter is read, in the same round trip.
 */
export interface SlidingWindowChange {
  /** The current window's change; its expiry must cover the next window, where it is read. */
  readonly current: CounterIncrement;
  /** The previous window's key, read and never changed. */
  readonly previousKey: string;
}

/** The two counters of a sliding window: the previous window's, and the current one's after the change. */
export interface SlidingWindowCounts {
  readonly previous: number;
  readonly current: number;
}

/**
 * A token bucket (GCRA) step on one key holding the theoretical arrival time (TAT). Times are
 * whole microseconds so every backend computes exactly the same answers.
 */
export interface TokenBucketChange {
  readonly key: string;
  /** Hits to admit, or to give back when `isNegative`; 0 only reads the state. */
  readonly hits: number;
  /** The caller's clock: every instance of the service counts on the same time line as the fixed windows do. */
  readonly nowUs: number;
  /** The time one hit costs: the window over requests_per_unit. */
  readonly emissionUs: number;
  /** How far the TAT may run ahead of now: burst × emissionUs. */
  readonly toleranceUs: number;
  readonly isPerSecond: boolean;
  readonly isNegative: boolean;
}

/** What one token bucket step did. */
export interface TokenBucketState {
  /**
   * Whether the hits were admitted: `max(TAT, now) + hits·emission − now ≤ tolerance`. A refusal
   * leaves the TAT where it was; a refund or a read is always admitted.
   */
  readonly isAdmitted: boolean;
  /** The TAT after the step (0 when the bucket is full and the key absent). */
  readonly tatUs: number;
}

/** Backend names, as errors and statistics report them. */
export type BackendName = 'redis' | 'memcache' | 'memory';

/**
 * A shared counter backend. Implementations map every driver failure to a StoreError.
 *
 * Each counting method answers with a value or a promise of it (`Pending`): a store that needs
 * no I/O (memory) answers in the calling turn, and then throws the StoreError where a promise
 * would reject. Callers continue either with lib/pending's `andThen`, or `await`.
 *
 * A counter of Infinity (a TAT of Infinity) is an answer rather than a count: over every limit,
 * and not to be remembered by the local over-limit cache. Only a wrapper that answers for a
 * backend it cannot reach gives it (BACKEND_FAILURE_MODE=deny).
 */
export interface CounterStore {
  readonly backend: BackendName;
  /**
   * Applies every change, sets each key's expiry, and answers with the values after the
   * change, in the order given. Fails with a StoreError when the backend fails.
   */
  increment(batch: readonly CounterIncrement[]): Pending<number[]>;
  /** Current values (0 for a missing key), in the order given. Fails with a StoreError. */
  read(keys: readonly CounterRead[]): Pending<number[]>;
  /**
   * Applies each current-window change and reads each previous window, in one round trip with
   * any increment() or tokenBucket() of the same event-loop turn where the backend pipelines.
   * Answers in the order given; fails with a StoreError.
   */
  slidingWindow(batch: readonly SlidingWindowChange[]): Pending<SlidingWindowCounts[]>;
  /**
   * Runs each token bucket step atomically on its key (a key that expires when its bucket is full
   * again). Answers in the order given; fails with a StoreError, or with a non-transient one
   * when the backend cannot (`unsupported`).
   */
  tokenBucket(batch: readonly TokenBucketChange[]): Pending<TokenBucketState[]>;
  /** The algorithms this backend cannot run, and why; configurations using them are refused. */
  readonly unsupported: Readonly<Partial<Record<Algorithm, string>>>;
  /** False while the store has no working connection. */
  isConnected(): boolean;
  /** Calls `listener` whenever isConnected() changes. */
  onConnectionChange(listener: (isConnected: boolean) => void): void;
  /** Finishes in-flight work and releases connections and timers. */
  close(): Promise<void>;
}
