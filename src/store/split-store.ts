// Two backend instances as one store: per-second keys on one, every other key on the other.
import type { Pending } from '../lib/pending';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from './counter-store';
import { StoreError } from './errors';

/**
 * REDIS_PERSECOND with breakers on: each instance is its own store behind its own breaker, so a
 * hanging per-second server fails fast without opening the main one's. Each call's items go to
 * their instance and the answers come back in the order given.
 */
export class PerSecondSplitStore implements CounterStore {
  readonly backend: CounterStore['backend'];
  readonly unsupported: CounterStore['unsupported'];

  constructor(
    private readonly main: CounterStore,
    private readonly perSecond: CounterStore,
  ) {
    this.backend = main.backend;
    this.unsupported = main.unsupported;
  }

  private async split<T, R>(
    items: readonly T[],
    isPerSecond: (item: T) => boolean,
    run: (store: CounterStore, items: T[]) => Pending<R[]>,
  ): Promise<R[]> {
    const mainItems = items.filter((item) => !isPerSecond(item));
    const secondItems = items.filter(isPerSecond);
    const [mainValues, secondValues] = await Promise.all([
      mainItems.length > 0 ? run(this.main, mainItems) : [],
      secondItems.length > 0 ? run(this.perSecond, secondItems) : [],
    ]);
    let m = 0;
    let s = 0;
    return items.map((item) => {
      const value = isPerSecond(item) ? secondValues[s++] : mainValues[m++];
      if (value === undefined) throw new StoreError(this.backend, 'an answer is missing', true);
      return value;
    });
  }

  increment(batch: readonly CounterIncrement[]): Promise<number[]> {
    return this.split(
      batch,
      (i) => i.isPerSecond,
      (store, items) => store.increment(items),
    );
  }

  read(keys: readonly CounterRead[]): Promise<number[]> {
    return this.split(
      keys,
      (k) => k.isPerSecond,
      (store, items) => store.read(items),
    );
  }

  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    return this.split(
      batch,
      (i) => i.current.isPerSecond,
      (store, items) => store.slidingWindow(items),
    );
  }

  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    return this.split(
      batch,
      (i) => i.isPerSecond,
      (store, items) => store.tokenBucket(items),
    );
  }

  isConnected(): boolean {
    return this.main.isConnected() && this.perSecond.isConnected();
  }

  onConnectionChange(listener: (isConnected: boolean) => void): void {
    const tell = (): void => {
      listener(this.isConnected());
    };
    this.main.onConnectionChange(tell);
    this.perSecond.onConnectionChange(tell);
  }

  async close(): Promise<void> {
    await this.main.close();
    await this.perSecond.close();
  }
}
