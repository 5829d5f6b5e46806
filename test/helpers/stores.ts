// Builds each CounterStore implementation for the suites that run against all of them.
import type { Pending } from '../../src/lib/pending';
import { ManualClock } from '../../src/lib/clock';
import { silentLogger } from '../../src/lib/logger';
import { loadSettings, type RedisBackendSettings } from '../../src/settings';
import {
  MemcachedCounterStore,
  MemoryCounterStore,
  RedisCounterStore,
  type CounterStore,
  type RedisStoreOptions,
} from '../../src/store';
import type { CounterTable } from '../../src/store/memory/counter-table';
import type { Cluster, Redis } from 'ioredis';
import type { MemcachedServer } from './memcached-server';
import { memcacheSettings } from './memcached-settings';
import type { RedisServer } from './redis-server';

/** A store under test and what the suite needs to inspect it. */
export interface StoreFixture {
  readonly name: string;
  readonly store: CounterStore;
  /** The value of a key as the backend holds it, or undefined when absent. */
  rawValue(key: string): Promise<number | undefined>;
  /** Seconds to live of a key, or undefined when absent or without expiry. */
  ttlSeconds(key: string): Promise<number | undefined>;
  close(): Promise<void>;
  /**
   * When the backend sets a key's expiry: on every increment (Redis, memory), or only when
   * the key is created (memcached, as the reference's memcached backend does).
   */
  readonly expirySetOn: 'every-increment' | 'creation';
}

export function redisSettings(env: Record<string, string>): RedisBackendSettings {
  const settings = loadSettings(env);
  if (settings.backend.type !== 'redis') throw new Error('expected redis settings');
  return settings.backend;
}

/**
 * `fixture` with its store answering by promise, as a backend with I/O does: the same counts on
 * the engine's other path.
 */
export function behindPromises<F extends StoreFixture>(fixture: F): F {
  const inner = fixture.store;
  const later = <T>(answer: () => Pending<T>): Promise<T> => Promise.resolve().then(answer);
  const store: CounterStore = {
    backend: inner.backend,
    unsupported: inner.unsupported,
    increment: (batch) => later(() => inner.increment(batch)),
    read: (keys) => later(() => inner.read(keys)),
    slidingWindow: (batch) => later(() => inner.slidingWindow(batch)),
    tokenBucket: (batch) => later(() => inner.tokenBucket(batch)),
    isConnected: () => inner.isConnected(),
    onConnectionChange: (listener) => {
      inner.onConnectionChange(listener);
    },
    close: () => inner.close(),
  };
  return { ...fixture, store };
}

export function memoryFixture(
  clock = new ManualClock(1_700_000_000_000),
): StoreFixture & { clock: ManualClock } {
  const store = new MemoryCounterStore({ clock });
  // The raw view a Redis fixture gets from its server: the table's own entry, expired or not.
  const table = (store as unknown as { table: CounterTable }).table;
  const held = (key: string): number => table.find(key);
  return {
    name: 'memory',
    store,
    clock,
    rawValue: (key) => {
      const at = held(key);
      return Promise.resolve(
        at < 0 || table.expiresAtMs(at) <= clock.nowMs() ? undefined : table.value(at),
      );
    },
    ttlSeconds: (key) => {
      const at = held(key);
      return Promise.resolve(
        at < 0 ? undefined : Math.ceil((table.expiresAtMs(at) - clock.nowMs()) / 1000),
      );
    },
    close: () => store.close(),
    expirySetOn: 'every-increment',
  };
}

export async function redisFixture(
  server: RedisServer,
  env: Record<string, string> = {},
): Promise<StoreFixture> {
  return openRedisFixture('redis', { REDIS_URL: `127.0.0.1:${server.port}`, ...env }, [
    server.client(),
  ]);
}

/**
 * A Redis store opened from environment-style settings (any mode), checked through `checkers`:
 * clients of the places a key may live (the main and per-second instances); a key is read from
 * the first that holds it. The checkers are closed with the fixture.
 */
export async function openRedisFixture(
  name: string,
  env: Record<string, string>,
  checkers: readonly (Redis | Cluster)[],
  options: RedisStoreOptions = {},
): Promise<StoreFixture> {
  const store = await RedisCounterStore.open(redisSettings(env), silentLogger, undefined, options);
  const holder = async (key: string): Promise<Redis | Cluster | undefined> => {
    for (const client of checkers) if ((await client.exists(key)) === 1) return client;
    return undefined;
  };
  return {
    name,
    store,
    rawValue: async (key) => {
      const value = await (await holder(key))?.get(key);
      return value === null || value === undefined ? undefined : Number(value);
    },
    ttlSeconds: async (key) => {
      const ttl = (await (await holder(key))?.ttl(key)) ?? -2;
      return ttl < 0 ? undefined : ttl;
    },
    close: async () => {
      await store.close();
      for (const client of checkers) client.disconnect();
    },
    expirySetOn: 'every-increment',
  };
}

/** The memcached store over real servers; values are read from whichever server holds them. */
export async function memcachedFixture(
  servers: readonly MemcachedServer[],
  env: Record<string, string> = {},
): Promise<StoreFixture & { store: MemcachedCounterStore }> {
  const store = await MemcachedCounterStore.open(
    memcacheSettings({
      MEMCACHE_HOST_PORT: servers.map((s) => s.address).join(','),
      // Generous, so a loaded machine does not fail a call; the timeout has its own test.
      MEMCACHE_TIMEOUT: '5s',
      ...env,
    }),
    { logger: silentLogger },
  );
  const find = async (key: string): Promise<{ value: string; ttlSeconds: number } | undefined> => {
    for (const server of servers) {
      const item = await server.item(key);
      if (item !== undefined) return item;
    }
    return undefined;
  };
  return {
    name: 'memcached',
    store,
    rawValue: async (key) => {
      const item = await find(key);
      return item === undefined ? undefined : Number(item.value);
    },
    ttlSeconds: async (key) => {
      const item = await find(key);
      return item === undefined || item.ttlSeconds < 0 ? undefined : item.ttlSeconds;
    },
    close: () => store.close(),
    expirySetOn: 'creation',
  };
}
