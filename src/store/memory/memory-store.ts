// In-process counters with expiry: the embedded backend for single hosts, development and tests.
import type { Clock } from '../../lib/clock';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { tokenBucketStep } from '../token-bucket';
import { CounterTable } from './counter-table';
import { ExpiryIndex } from './expiry-index';

export interface MemoryStoreOptions {
  readonly clock: Clock;
  /** How often expired keys are dropped; between sweeps they are ignored on access. */
  readonly sweepIntervalMs?: number;
  /** Most keys held (MEMORY_MAX_KEYS); a new key past it evicts the key nearest its expiry. */
  readonly maxKeys?: number;
  /** Told of each key evicted to make room (counted as a statistic). */
  readonly onEvict?: () => void;
}

/**
 * How long one slice of the background sweep may hold the event loop. A time, not a count of
 * keys: how long a given number of keys takes varies with what else the process runs.
 */
const SWEEP_SLICE_MS = 2;
/** Keys looked at between two reads of the clock during a slice. */
const SWEEP_STEP = 256;

/**
 * Counters live in one table of values and expiries, split in shards so that no rebuild touches
 * many keys at once (counter-table.ts); an expired key reads as absent and is dropped by the
 * sweep, so memory holds only the live windows. Keys are filed by the second they expire in
 * (expiry-index.ts): a sweep visits only the keys that are due, a slice at a time, so a
 * million keys never stop the event loop for long; and when the store is full the key
 * nearest its expiry makes room (Redis's volatile-ttl), the one whose loss costs least.
 */
export class MemoryCounterStore implements CounterStore {
  readonly backend = 'memory' as const;
  readonly unsupported = Object.freeze({});
  private readonly table = new CounterTable();
  private readonly index = new ExpiryIndex((key) => {
    const at = this.table.find(key);
    return at < 0 ? undefined : this.table.expiresAtMs(at);
  });
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxKeys: number;
  private isSweeping = false;
  private isClosed = false;

  constructor(private readonly options: MemoryStoreOptions) {
    this.maxKeys = options.maxKeys ?? Number.MAX_SAFE_INTEGER;
    this.sweeper = setInterval(() => {
      this.sweepSoon();
    }, options.sweepIntervalMs ?? 1000);
    this.sweeper.unref();
  }

  /** Number of keys held, expired ones included until the next sweep. */
  get size(): number {
    return this.table.size;
  }

  /**
   * Drops up to `maxSteps` expired keys' worth of index entries; returns true when keys that
   * are due remain (the caller continues later).
   */
  sweep(maxSteps = Number.MAX_SAFE_INTEGER): boolean {
    const now = this.options.clock.nowMs();
    const budget = { steps: maxSteps };
    for (;;) {
      const key = this.index.takeNext(now, budget);
      if (key === undefined) return budget.steps <= 0;
      this.table.delete(key);
    }
  }

  /** Sweeps for about `ms` of the event loop's time; true when keys that are due remain. */
  private sweepFor(ms: number): boolean {
    const until = performance.now() + ms;
    while (this.sweep(SWEEP_STEP)) if (performance.now() >= until) return true;
    return false;
  }

  /** Sweeps in slices, yielding between them, until nothing due is left. */
  private sweepSoon(): void {
    if (this.isSweeping || this.isClosed) return;
    this.isSweeping = true;
    const slice = (): void => {
      if (!this.isClosed && this.sweepFor(SWEEP_SLICE_MS)) {
        setImmediate(slice);
        return;
      }
      this.isSweeping = false;
    };
    slice();
  }

  /** Makes room for one more key: an expired key if one is due, else the nearest to expiry. */
  private makeRoom(now: number): void {
    const unbounded = { steps: Number.MAX_SAFE_INTEGER };
    const victim =
      this.index.takeNext(now, { steps: 64 }) ?? this.index.takeNext(Infinity, unbounded);
    if (victim === undefined) return;
    const at = this.table.find(victim);
    if (at < 0) return;
    if (this.table.expiresAtMs(at) > now) this.options.onEvict?.();
    this.table.deleteAt(at);
  }

  /** Where the table holds `key` unexpired at `now`, or -1 (an expired key is dropped). */
  private live(key: string, now: number): number {
    const at = this.table.find(key);
    if (at < 0) return -1;
    if (this.table.expiresAtMs(at) <= now) {
      this.table.deleteAt(at);
      return -1;
    }
    return at;
  }

  /** A new counter for `key`, making room first when the store is full. */
  private create(key: string, value: number, expiresAtMs: number, now: number): void {
    if (this.table.size >= this.maxKeys) this.makeRoom(now);
    this.table.set(key, value, expiresAtMs);
    this.index.file(key, expiresAtMs);
  }

  /** One counter change at `now`; returns the value after it. */
  private change(item: CounterIncrement, now: number): number {
    const at = this.live(item.key, now);
    const expiresAtMs = now + item.ttlSeconds * 1000;
    if (at < 0) {
      // As the Redis script does: a refund on a missing key creates nothing.
      if (item.isNegative) return 0;
      this.create(item.key, item.hits, expiresAtMs, now);
      return item.hits;
    }
    const before = this.table.value(at);
    const value = item.isNegative ? Math.max(0, before - item.hits) : before + item.hits;
    this.table.update(at, value, expiresAtMs);
    return value;
  }

  /** Answers in the calling turn, as every method here does: no I/O, so no promise. */
  increment(batch: readonly CounterIncrement[]): number[] {
    const now = this.options.clock.nowMs();
    const out = new Array<number>(batch.length);
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i];
      if (item !== undefined) out[i] = this.change(item, now);
    }
    return out;
  }

  slidingWindow(batch: readonly SlidingWindowChange[]): SlidingWindowCounts[] {
    const now = this.options.clock.nowMs();
    return batch.map((item) => {
      // Read before change(), whose insert may move entries and so the position.
      const at = this.live(item.previousKey, now);
      const previous = at < 0 ? 0 : this.table.value(at);
      return { previous, current: this.change(item.current, now) };
    });
  }

  /** The TAT is the key's value, kept until the bucket is full. */
  tokenBucket(batch: readonly TokenBucketChange[]): TokenBucketState[] {
    const now = this.options.clock.nowMs();
    return batch.map((item) => {
      const at = this.live(item.key, now);
      const tatUs = at < 0 ? 0 : this.table.value(at);
      const step = tokenBucketStep(tatUs, item);
      const expiresAtMs = Math.ceil(step.tatUs / 1000);
      if (step.tatUs === 0) {
        if (at >= 0) this.table.deleteAt(at);
      } else if (at < 0) {
        this.create(item.key, step.tatUs, expiresAtMs, now);
      } else if (step.tatUs !== tatUs) {
        // A later expiry: the index re-files the key when it reaches the old bucket.
        this.table.update(at, step.tatUs, expiresAtMs);
      }
      return step;
    });
  }

  /** Current values (0 for a missing key). */
  read(keys: readonly CounterRead[]): number[] {
    const now = this.options.clock.nowMs();
    return keys.map((k) => {
      const at = this.live(k.key, now);
      return at < 0 ? 0 : this.table.value(at);
    });
  }

  isConnected(): boolean {
    return true;
  }

  onConnectionChange(): void {
    // Always connected.
  }

  close(): Promise<void> {
    this.isClosed = true;
    clearInterval(this.sweeper);
    this.table.clear();
    this.index.clear();
    return Promise.resolve();
  }
}
