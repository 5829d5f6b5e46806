// BACKEND_FAILURE_MODE=local: count in this process while the backend is away, granting each
// limit only BACKEND_FAILURE_LOCAL_SHARE of itself.
import type {
  CounterIncrement,
  CounterRead,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import type { MemoryCounterStore } from '../memory/memory-store';
import type { OpenAnswers } from './answers';

/**
 * Counts every hit in the memory store and reports counters divided by the share (rounded up),
 * so a limit of L admits about share × L hits here; a token bucket's hits cost 1/share each.
 * An approximation: each instance grants its share whatever the others do, and what was counted
 * in the backend before it hung is not seen.
 */
export class LocalShare implements OpenAnswers {
  constructor(
    private readonly store: MemoryCounterStore,
    private readonly share: number,
  ) {}

  private scaled(value: number): number {
    return Math.ceil(value / this.share);
  }

  increment(batch: readonly CounterIncrement[]): Promise<number[]> {
    return Promise.resolve(this.store.increment(batch).map((v) => this.scaled(v)));
  }

  read(keys: readonly CounterRead[]): Promise<number[]> {
    return Promise.resolve(this.store.read(keys).map((v) => this.scaled(v)));
  }

  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    return Promise.resolve(
      this.store.slidingWindow(batch).map((c) => ({
        previous: this.scaled(c.previous),
        current: this.scaled(c.current),
      })),
    );
  }

  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    const share = this.share;
    return Promise.resolve(
      this.store.tokenBucket(batch.map((c) => ({ ...c, emissionUs: c.emissionUs / share }))),
    );
  }
}
