// Counters in Redis (single, sentinel or cluster): INCRBY + EXPIRE per key, pipelined per instance.
import { systemClock, type Clock } from '../../lib/clock';
import type { Logger } from '../../lib/logger';
import type { RedisBackendSettings, RedisInstanceSettings } from '../../settings';
import { STAT, type Counter, type Gauge } from '../../stats';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { StoreError } from '../errors';
import { FailureLog } from '../failure-log';
import type { AwsIdentity } from './aws-identity';
import { Instance, type PoolStats } from './instance';

/** What the store reports its connections to: the reference's redis_pool statistics. */
export interface PoolStatsSource {
  counter(name: string): Counter;
  gauge(name: string): Gauge;
}

/** Parts the store takes from its caller rather than from the environment. */
export interface RedisStoreOptions {
  /** Signs IAM tokens; the AWS SDK's default credential chain and region when absent. */
  readonly awsIdentity?: AwsIdentity;
  /** The clock IAM tokens are signed at, and outages are timed by. */
  readonly clock?: Clock;
  /**
   * The settings' main instance is the per-second one opened alone (its statistics are
   * redis_per_second_pool): REDIS_PERSECOND behind a breaker of its own.
   */
  readonly isPerSecondOnly?: boolean;
}

function poolStats(
  stats: PoolStatsSource | undefined,
  pool: 'redis_pool' | 'redis_per_second_pool',
): PoolStats | undefined {
  if (stats === undefined) return undefined;
  return {
    active: stats.gauge(STAT.redisPool(pool, 'cx_active')),
    total: stats.counter(STAT.redisPool(pool, 'cx_total')),
    closed: stats.counter(STAT.redisPool(pool, 'cx_local_close')),
  };
}

export class RedisCounterStore implements CounterStore {
  readonly backend = 'redis' as const;
  readonly unsupported = Object.freeze({});
  private readonly listeners: ((isConnected: boolean) => void)[] = [];
  private lastConnected = false;

  private constructor(
    private readonly main: Instance,
    private readonly perSecond: Instance | undefined,
  ) {}

  /**
   * Connects to the configured instance(s), retrying the first connection as REDIS_STARTUP_*
   * says. Rejects with a StoreError when it gives up.
   */
  static async open(
    settings: RedisBackendSettings,
    logger: Logger,
    stats?: PoolStatsSource,
    options: RedisStoreOptions = {},
  ): Promise<RedisCounterStore> {
    const holder: { store?: RedisCounterStore } = {};
    const failures = new FailureLog('redis', logger, options.clock ?? systemClock);
    const open = (instance: RedisInstanceSettings, isPerSecond: boolean): Promise<Instance> =>
      Instance.open(instance, {
        logger,
        startup: settings.startup,
        pool: poolStats(stats, isPerSecond ? 'redis_per_second_pool' : 'redis_pool'),
        onChange: () => holder.store?.connectionChanged(),
        failures,
        awsIdentity: options.awsIdentity,
        clock: options.clock,
      });
    const main = await open(settings.main, options.isPerSecondOnly === true);
    let perSecond: Instance | undefined;
    try {
      perSecond =
        settings.perSecond === undefined ? undefined : await open(settings.perSecond, true);
    } catch (err: unknown) {
      await main.close();
      throw err;
    }
    const store = new RedisCounterStore(main, perSecond);
    holder.store = store;
    store.connectionChanged();
    return store;
  }

  private connectionChanged(): void {
    const now = this.isConnected();
    if (now === this.lastConnected) return;
    this.lastConnected = now;
    for (const listener of this.listeners) listener(now);
  }

  private instanceFor(isPerSecond: boolean): Instance {
    return isPerSecond && this.perSecond !== undefined ? this.perSecond : this.main;
  }

  increment(batch: readonly CounterIncrement[]): Promise<number[]> {
    if (this.perSecond === undefined || !batch.some((i) => i.isPerSecond)) {
      return this.main.increment(batch);
    }
    return this.split(batch, (instance, items) => instance.increment(items));
  }

  read(keys: readonly CounterRead[]): Promise<number[]> {
    if (this.perSecond === undefined || !keys.some((k) => k.isPerSecond)) {
      return this.main.read(keys.map((k) => k.key));
    }
    return this.split(keys, (instance, items) => instance.read(items.map((k) => k.key)));
  }

  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    if (this.perSecond === undefined || !batch.some((i) => i.current.isPerSecond)) {
      return this.main.slidingWindow(batch);
    }
    const items = batch.map((change) => ({ change, isPerSecond: change.current.isPerSecond }));
    return this.split(items, (instance, part) => instance.slidingWindow(part.map((p) => p.change)));
  }

  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    if (this.perSecond === undefined || !batch.some((i) => i.isPerSecond)) {
      return this.main.tokenBucket(batch);
    }
    return this.split(batch, (instance, items) => instance.tokenBucket(items));
  }

  /** Sends each item to its instance and puts the answers back in the original order. */
  private async split<T extends { readonly isPerSecond: boolean }, R>(
    items: readonly T[],
    run: (instance: Instance, items: T[]) => Promise<R[]>,
  ): Promise<R[]> {
    const mainItems: T[] = [];
    const secondItems: T[] = [];
    for (const item of items)
      (this.instanceFor(item.isPerSecond) === this.main ? mainItems : secondItems).push(item);
    const [mainValues, secondValues] = await Promise.all([
      mainItems.length > 0 ? run(this.main, mainItems) : Promise.resolve([]),
      secondItems.length > 0 ? run(this.instanceFor(true), secondItems) : Promise.resolve([]),
    ]);
    let m = 0;
    let s = 0;
    return items.map((item) => {
      const value =
        this.instanceFor(item.isPerSecond) === this.main ? mainValues[m++] : secondValues[s++];
      if (value === undefined) throw new StoreError('redis', 'an answer is missing', true);
      return value;
    });
  }

  isConnected(): boolean {
    return this.main.isConnected && (this.perSecond?.isConnected ?? true);
  }

  onConnectionChange(listener: (isConnected: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    await this.main.close();
    await this.perSecond?.close();
  }
}
