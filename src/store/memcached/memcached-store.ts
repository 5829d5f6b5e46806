// Counters in memcached, on the servers and under the keys the reference uses, so both can share them.
import { describeError } from '../../lib/errors';
import { systemClock, type Clock } from '../../lib/clock';
import type { Logger } from '../../lib/logger';
import type { MemcacheBackendSettings } from '../../settings';
import { STAT, type Counter } from '../../stats';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { connectionFailure } from '../connection-words';
import { StoreError } from '../errors';
import { FailureLog } from '../failure-log';
import { MemcachedIoError } from './connection';
import { FirstAnswers } from './first-answers';
import { unstorableKeyReason } from './key-rules';
import { ServerList } from './server-list';
import type { ServerPool } from './server-pool';
import { MemcachedReplyError, type ServerSet } from './server-set';
import { dnsSrvResolver, type SrvResolver } from './srv';
import { memcachedTlsOptions } from './tls-options';

/** memcached reads an expiry above 30 days as a Unix time, not as seconds from now. */
const MAX_RELATIVE_EXPIRY_SECONDS = 60 * 60 * 24 * 30;

/** Where the store counts its own operations: the reference's `ratelimit.memcache.*` names. */
export interface MemcacheStatsSource {
  counter(name: string): Counter;
}

export interface MemcachedStoreOptions {
  readonly logger: Logger;
  readonly stats?: MemcacheStatsSource;
  /** Wall clock in the servers' time domain, for expiries over 30 days; the system clock. */
  readonly clock?: Clock;
  /** SRV lookups; DNS unless a test injects another. */
  readonly resolver?: SrvResolver;
}

interface OpCounters {
  readonly success: Counter | undefined;
  readonly error: Counter | undefined;
}

/** The error callers get, in an operator's words: a lost connection names the server. */
function storeError(err: unknown, server: string | undefined): StoreError {
  if (err instanceof StoreError) return err;
  if (err instanceof MemcachedIoError && err.failure === 'connection' && server !== undefined) {
    return new StoreError('memcache', connectionFailure(err.cause ?? err), true, {
      cause: err,
      unreachable: server,
    });
  }
  const where = server === undefined ? '' : `${server}: `;
  // A reply (a stored value that is not a number ...) is not cured by retrying; the rest may be.
  const isTransient = !(err instanceof MemcachedReplyError);
  const message = err instanceof MemcachedIoError ? err.message : describeError(err);
  return new StoreError('memcache', `${where}${message}`, isTransient, { cause: err });
}

/** Why memcached cannot count a token bucket; configurations that ask are refused at load. */
const NO_TOKEN_BUCKET =
  'memcached has no script or atomic read-modify-write of one key in one round trip, so a ' +
  'bucket could not be checked and moved without racing the other instances';

/** What memcached cannot count, known before a store is opened (a supervisor compiles). */
export const MEMCACHED_UNSUPPORTED = Object.freeze({ token_bucket: NO_TOKEN_BUCKET });

export class MemcachedCounterStore implements CounterStore {
  readonly backend = 'memcache' as const;
  readonly unsupported = MEMCACHED_UNSUPPORTED;
  private readonly listeners: ((isConnected: boolean) => void)[] = [];
  private readonly failures: FailureLog;
  /** The first servers not answering yet: their wait is logged apart from outages. */
  private readonly firstAnswers: FirstAnswers;
  /** Not connected until every server of the first list has answered once. */
  private lastConnected = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly counters: {
    readonly increment: OpCounters;
    readonly decrement: OpCounters;
    readonly multiget: OpCounters;
    readonly keysRequested: Counter | undefined;
    readonly keysFound: Counter | undefined;
    readonly keyRefused: Counter | undefined;
  };

  private constructor(
    private servers: ServerList | undefined,
    private readonly clock: Clock,
    private readonly logger: Logger,
    stats: MemcacheStatsSource | undefined,
  ) {
    this.failures = new FailureLog('memcache', logger, clock);
    this.firstAnswers = new FirstAnswers(logger);
    const counter = (name: string): Counter | undefined => stats?.counter(STAT.memcache(name));
    const op = (name: string): OpCounters => ({
      success: counter(`${name}.__code=success`),
      error: counter(`${name}.__code=error`),
    });
    this.counters = {
      increment: op('increment'),
      decrement: op('decrement'),
      multiget: op('multiget'),
      keysRequested: counter('keys_requested'),
      keysFound: counter('keys_found'),
      keyRefused: counter('key_refused'),
    };
  }

  /**
   * Resolves MEMCACHE_SRV (when set) and probes each server once (within MEMCACHE_TIMEOUT); a
   * server that did not answer is probed again in the background, with backoff, until it does:
   * isConnected() is false until every one has. Other connections open on first use. Rejects with a StoreError when the SRV name does not resolve, or a
   * SettingsError when a TLS file cannot be read; an absent server never makes it reject.
   */
  static async open(
    settings: MemcacheBackendSettings,
    options: MemcachedStoreOptions,
  ): Promise<MemcachedCounterStore> {
    const store = new MemcachedCounterStore(
      undefined,
      options.clock ?? systemClock,
      options.logger,
      options.stats,
    );
    const tls = settings.tls === undefined ? undefined : memcachedTlsOptions(settings.tls);
    try {
      store.servers = await ServerList.open({
        hostPorts: settings.hostPorts,
        srv: settings.srv,
        srvRefreshMs: settings.srvRefreshMs,
        // As the reference's client: less than one means its default of 2.
        connectionsPerServer: settings.maxIdleConns > 0 ? settings.maxIdleConns : 2,
        timeoutMs: settings.timeoutMs,
        tls,
        resolver: options.resolver ?? dnsSrvResolver,
        logger: options.logger,
        onStateChange: (pool) => {
          store.poolChanged(pool);
        },
        onConnectionError: (pool, err) => {
          store.poolFailed(pool, err);
        },
      });
    } catch (err: unknown) {
      throw new StoreError(
        'memcache',
        `cannot find the memcached servers of MEMCACHE_SRV ${settings.srv ?? ''}: ${describeError(err)}`,
        true,
        { cause: err },
      );
    }
    await store.firstAnswers.start(store.servers.current.pools);
    return store;
  }

  /** The server list in use; for tests and the refresh it owns. */
  get serverList(): ServerList {
    if (this.servers === undefined) throw new Error('the memcached store is not open');
    return this.servers;
  }

  private poolChanged(pool: ServerPool): void {
    if (pool.isUp && !this.firstAnswers.answered(pool.address)) this.failures.up(pool.address);
    const now = this.isConnected();
    if (now === this.lastConnected) return;
    this.lastConnected = now;
    for (const listener of this.listeners) listener(now);
  }

  /**
   * A connection to `pool`'s server failed: the server is away, for this reason. Before it
   * first answers, the start-up wait's warning says so instead of an outage's error.
   */
  private poolFailed(pool: ServerPool, err: Error): void {
    const cause = err instanceof MemcachedIoError ? (err.cause ?? err) : err;
    if (!this.firstAnswers.isWaitingFor(pool.address)) {
      this.failures.down(pool.address, connectionFailure(cause));
    }
    this.logger.debug('memcached connection failed', { server: pool.address, error: err.message });
  }

  /** A StoreError for the first key memcached cannot store; such a request sends nothing. */
  private refuseUnstorable(keys: readonly { readonly key: string }[]): StoreError | undefined {
    for (const { key } of keys) {
      const reason = unstorableKeyReason(key);
      if (reason === undefined) continue;
      this.counters.keyRefused?.inc();
      const shown = key.length > 80 ? `${key.slice(0, 80)}...` : key;
      return new StoreError('memcache', `key ${JSON.stringify(shown)} ${reason}`, false);
    }
    return undefined;
  }

  /** Seconds as memcached reads them: relative up to 30 days, a Unix time beyond. */
  private expiryFor(ttlSeconds: number): number {
    if (ttlSeconds <= MAX_RELATIVE_EXPIRY_SECONDS) return ttlSeconds;
    return Math.floor(this.clock.nowMs() / 1000) + ttlSeconds;
  }

  private async counted<T>(
    work: Promise<T>,
    op: OpCounters,
    server: string | undefined,
  ): Promise<T> {
    try {
      const value = await work;
      op.success?.inc();
      return value;
    } catch (err: unknown) {
      op.error?.inc();
      throw storeError(err, server);
    }
  }

  private apply(set: ServerSet, item: CounterIncrement): Promise<number> {
    const server = set.poolFor(item.key)?.address;
    if (item.isNegative) {
      return this.counted(set.decrement(item.key, item.hits), this.counters.decrement, server);
    }
    return this.counted(
      set.increment(item.key, item.hits, this.expiryFor(item.ttlSeconds)),
      this.counters.increment,
      server,
    );
  }

  /**
   * Each key is created with its hits and expiry, or incremented, in one atomic step on its
   * server; negative hits subtract and floor at 0. Rejects with a StoreError.
   */
  increment(batch: readonly CounterIncrement[]): Promise<number[]> {
    const refused = this.refuseUnstorable(batch);
    if (refused !== undefined) return Promise.reject(refused);
    const set = this.serverList.current;
    return this.tracked(Promise.all(batch.map((item) => this.apply(set, item))));
  }

  /**
   * The current window's change and the previous window's value, each on its own server, sent
   * together: the two keys need not live on one server. Rejects with a StoreError.
   */
  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    const refused = this.refuseUnstorable(
      batch.flatMap((item) => [item.current, { key: item.previousKey }]),
    );
    if (refused !== undefined) return Promise.reject(refused);
    const set = this.serverList.current;
    const one = async (item: SlidingWindowChange): Promise<SlidingWindowCounts> => {
      const [current, previous] = await Promise.all([
        this.apply(set, item.current),
        set.get(item.previousKey).catch((err: unknown) => {
          throw storeError(err, set.poolFor(item.previousKey)?.address);
        }),
      ]);
      return { current, previous: previous ?? 0 };
    };
    return this.tracked(Promise.all(batch.map(one)));
  }

  /** Never runs: configurations with token buckets are refused for this backend at load. */
  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    const key = batch[0]?.key ?? '';
    return Promise.reject(new StoreError('memcache', `${key}: ${NO_TOKEN_BUCKET}`, false));
  }

  /** Current values, 0 for missing keys. Rejects with a StoreError. */
  read(keys: readonly CounterRead[]): Promise<number[]> {
    const refused = this.refuseUnstorable(keys);
    if (refused !== undefined) return Promise.reject(refused);
    const set = this.serverList.current;
    this.counters.keysRequested?.add(keys.length);
    const reads = Promise.all(
      keys.map(async ({ key }) => {
        try {
          return await set.get(key);
        } catch (err: unknown) {
          throw storeError(err, set.poolFor(key)?.address);
        }
      }),
    );
    return this.tracked(
      this.counted(reads, this.counters.multiget, undefined).then((values) => {
        this.counters.keysFound?.add(values.filter((v) => v !== undefined).length);
        return values.map((v) => v ?? 0);
      }),
    );
  }

  /** Counts `work` in flight until it settles, and its failure toward the failure log. */
  private async tracked<T>(work: Promise<T>): Promise<T> {
    this.inFlight += 1;
    try {
      return await work;
    } catch (err: unknown) {
      if (err instanceof StoreError && !this.isAwaited(err)) this.failures.requestFailed(err);
      throw err;
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** A request failed on a first server not answering yet: the start-up wait logs that. */
  private isAwaited(err: StoreError): boolean {
    return err.unreachable !== undefined && this.firstAnswers.isWaitingFor(err.unreachable);
  }

  /** False until every server of the first list has answered, and while any has stopped. */
  isConnected(): boolean {
    return this.servers?.current.pools.every((p) => p.isUp) ?? false;
  }

  onConnectionChange(listener: (isConnected: boolean) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.firstAnswers.stop();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
    this.servers?.close();
  }
}
