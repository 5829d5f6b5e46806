// The CounterStore seam: counts and expires, nothing else. Decisions are the engine's.

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

/** Backend names, as errors and statistics report them. */
export type BackendName = 'redis' | 'memcache' | 'memory';

/**
 * A shared counter backend. Implementations map every driver failure to a StoreError.
 */
export interface CounterStore {
  readonly backend: BackendName;
  /**
   * Applies every change, sets each key's expiry, and resolves with the values after the
   * change, in the order given. Rejects with a StoreError when the backend fails.
   */
  increment(batch: readonly CounterIncrement[]): Promise<number[]>;
  /** Current values (0 for a missing key), in the order given. Rejects with a StoreError. */
  read(keys: readonly CounterRead[]): Promise<number[]>;
  /** False while the store has no working connection. */
  isConnected(): boolean;
  /** Calls `listener` whenever isConnected() changes. */
  onConnectionChange(listener: (isConnected: boolean) => void): void;
  /** Finishes in-flight work and releases connections and timers. */
  close(): Promise<void>;
}
