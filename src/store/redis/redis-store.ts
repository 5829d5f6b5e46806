// Counters in Redis: INCRBY + EXPIRE per key in one pipeline, a Lua script for floored refunds.
import { describeError } from '../../lib/errors';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from '../../lib/logger';
import type { RedisBackendSettings, RedisInstanceSettings } from '../../settings';
import { STAT, type Counter, type Gauge } from '../../stats';
import type { CounterIncrement, CounterRead, CounterStore } from '../counter-store';
import { StoreError } from '../errors';
import { PipelineBatcher, type PipelineOp } from './batcher';
import { connectWithBackoff, createClient, describeInstance } from './connection';

/**
 * Subtracts, floors at 0 and refreshes the expiry in one step; a missing key stays missing.
 * DECRBY keeps the arithmetic in Redis's integers: Lua's numbers are doubles, and a large
 * value written back from one ("9.2233720368548e+18") would make every later INCRBY fail.
 */
const DECREMENT_FLOORED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local value = redis.call('DECRBY', KEYS[1], ARGV[1])
if value < 0 then
  redis.call('SET', KEYS[1], 0, 'EX', ARGV[2])
  return 0
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return value
`;

/**
 * What a counter pushed past int64 reads as. INCRBY refuses to overflow and leaves the key
 * as it is, so the key is certainly over any limit (limits are 32-bit): the request is
 * answered OVER_LIMIT until the key expires, instead of failing every call on it.
 */
const SATURATED = 2 ** 63;

function isOverflow(err: Error): boolean {
  return err.message.includes('increment or decrement would overflow');
}

type RedisWithScript = Redis & {
  decrementFloored(key: string, hits: number, ttlSeconds: number): Promise<number>;
};
type PipelineWithScript = ChainableCommander & {
  decrementFloored(key: string, hits: number, ttlSeconds: number): ChainableCommander;
};

function storeError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = describeError(err);
  // Replies from the server (WRONGTYPE, NOSCRIPT ...) are not cured by retrying; the rest are.
  const isReply =
    err instanceof Error &&
    err.name === 'ReplyError' &&
    !message.startsWith('READONLY') &&
    !message.startsWith('LOADING');
  return new StoreError('redis', message, !isReply, { cause: err });
}

function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return 0;
}

/** One request's increments on one instance. */
class IncrementOp implements PipelineOp {
  readonly values: number[];
  constructor(
    private readonly items: readonly CounterIncrement[],
    private readonly resolve: (values: number[]) => void,
    private readonly reject: (err: StoreError) => void,
  ) {
    this.values = new Array<number>(items.length);
  }

  append(pipeline: ChainableCommander): number {
    let count = 0;
    for (const item of this.items) {
      if (item.isNegative) {
        (pipeline as PipelineWithScript).decrementFloored(item.key, item.hits, item.ttlSeconds);
        count += 1;
      } else {
        pipeline.incrby(item.key, item.hits).expire(item.key, item.ttlSeconds);
        count += 2;
      }
    }
    return count;
  }

  settle(replies: readonly [Error | null, unknown][]): void {
    let at = 0;
    for (let i = 0; i < this.items.length; i++) {
      const reply = replies[at];
      at += this.items[i]?.isNegative === true ? 1 : 2;
      if (reply === undefined) {
        this.reject(
          new StoreError('redis', 'the pipeline returned fewer replies than commands', true),
        );
        return;
      }
      if (reply[0] !== null) {
        if (!isOverflow(reply[0])) {
          this.reject(storeError(reply[0]));
          return;
        }
        this.values[i] = SATURATED;
        continue;
      }
      this.values[i] = asNumber(reply[1]);
    }
    this.resolve(this.values);
  }

  fail(err: unknown): void {
    this.reject(storeError(err));
  }
}

/** One request's reads on one instance. */
class ReadOp implements PipelineOp {
  constructor(
    private readonly keys: readonly string[],
    private readonly resolve: (values: number[]) => void,
    private readonly reject: (err: StoreError) => void,
  ) {}

  append(pipeline: ChainableCommander): number {
    for (const key of this.keys) pipeline.get(key);
    return this.keys.length;
  }

  settle(replies: readonly [Error | null, unknown][]): void {
    const out: number[] = [];
    for (const reply of replies) {
      if (reply[0] !== null) {
        this.reject(storeError(reply[0]));
        return;
      }
      out.push(reply[1] === null ? 0 : asNumber(reply[1]));
    }
    this.resolve(out);
  }

  fail(err: unknown): void {
    this.reject(storeError(err));
  }
}

/** What the store reports its connections to: the reference's redis_pool statistics. */
export interface PoolStatsSource {
  counter(name: string): Counter;
  gauge(name: string): Gauge;
}

/** One Redis instance: its client, its batcher and its connection state. */
class Instance {
  readonly batcher: PipelineBatcher;
  private isReady = false;

  constructor(
    readonly settings: RedisInstanceSettings,
    readonly client: RedisWithScript,
    onChange: () => void,
    pool: { active: Gauge; total: Counter; closed: Counter } | undefined,
  ) {
    this.batcher = new PipelineBatcher(client, settings.pipelineWindowMs);
    client.on('ready', () => {
      this.isReady = true;
      pool?.total.inc();
      pool?.active.set(1);
      onChange();
    });
    for (const event of ['close', 'end']) {
      client.on(event, () => {
        if (!this.isReady) return;
        this.isReady = false;
        pool?.closed.inc();
        pool?.active.set(0);
        onChange();
      });
    }
  }

  get isConnected(): boolean {
    return this.isReady;
  }

  increment(items: readonly CounterIncrement[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.batcher.submit(new IncrementOp(items, resolve, reject));
    });
  }

  read(keys: readonly string[]): Promise<number[]> {
    return new Promise((resolve, reject) => {
      this.batcher.submit(new ReadOp(keys, resolve, reject));
    });
  }
}

export class RedisCounterStore implements CounterStore {
  readonly backend = 'redis' as const;
  private readonly listeners: ((isConnected: boolean) => void)[] = [];
  private lastConnected = false;

  private constructor(
    private readonly main: Instance,
    private readonly perSecond: Instance | undefined,
    private readonly logger: Logger,
  ) {}

  /**
   * Connects to the configured instance(s), retrying the first connection as REDIS_STARTUP_*
   * says. Rejects with a StoreError when it gives up.
   */
  static async open(
    settings: RedisBackendSettings,
    logger: Logger,
    stats?: PoolStatsSource,
  ): Promise<RedisCounterStore> {
    const holder: { store?: RedisCounterStore } = {};
    const onChange = (): void => holder.store?.connectionChanged();
    const build = (instance: RedisInstanceSettings): Instance => {
      const client = createClient(instance) as RedisWithScript;
      client.defineCommand('decrementFloored', { numberOfKeys: 1, lua: DECREMENT_FLOORED });
      client.on('error', (err: Error) => {
        logger.debug('redis client error', {
          target: describeInstance(instance),
          error: err.message,
        });
      });
      const pool = instance === settings.perSecond ? 'redis_per_second_pool' : 'redis_pool';
      return new Instance(
        instance,
        client,
        onChange,
        stats === undefined
          ? undefined
          : {
              active: stats.gauge(STAT.redisPool(pool, 'cx_active')),
              total: stats.counter(STAT.redisPool(pool, 'cx_total')),
              closed: stats.counter(STAT.redisPool(pool, 'cx_local_close')),
            },
      );
    };
    const main = build(settings.main);
    const perSecond = settings.perSecond === undefined ? undefined : build(settings.perSecond);
    const store = new RedisCounterStore(main, perSecond, logger);
    holder.store = store;
    try {
      for (const instance of [main, perSecond]) {
        if (instance === undefined) continue;
        logger.warn('connecting to redis', {
          target: describeInstance(instance.settings),
          perSecond: instance === perSecond,
        });
        await connectWithBackoff(instance.client, instance.settings, settings.startup, logger);
      }
    } catch (err: unknown) {
      main.client.disconnect();
      perSecond?.client.disconnect();
      throw storeError(err);
    }
    store.connectionChanged();
    return store;
  }

  private connectionChanged(): void {
    const now = this.isConnected();
    if (now === this.lastConnected) return;
    this.lastConnected = now;
    if (!now) this.logger.error('lost the connection to redis; requests fail until it is back');
    else this.logger.info('connected to redis');
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

  /** Sends each item to its instance and puts the answers back in the original order. */
  private async split<T extends { readonly isPerSecond: boolean }>(
    items: readonly T[],
    run: (instance: Instance, items: T[]) => Promise<number[]>,
  ): Promise<number[]> {
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
    return items.map((item) =>
      this.instanceFor(item.isPerSecond) === this.main
        ? (mainValues[m++] ?? 0)
        : (secondValues[s++] ?? 0),
    );
  }

  isConnected(): boolean {
    return this.main.isConnected && (this.perSecond?.isConnected ?? true);
  }

  onConnectionChange(listener: (isConnected: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    for (const instance of [this.main, this.perSecond]) {
      if (instance === undefined) continue;
      await instance.batcher.drain();
      instance.client.options.retryStrategy = () => null;
      try {
        await instance.client.quit();
      } catch {
        instance.client.disconnect();
      }
    }
  }
}
