// memcached-only behaviour: the reference's server choice and data, refused keys, outages, SRV.
import { silentLogger } from '../../../src/lib/logger';
import { StatsStore } from '../../../src/stats';
import { MemcachedCounterStore, StoreError } from '../../../src/store';
import { crc32 } from '../../../src/store/memcached/server-selection';
import type { SrvRecord } from '../../../src/store/memcached/srv';
import { eventually } from '../../helpers/eventually';
import { MemcachedServer } from '../../helpers/memcached-server';
import { memcacheSettings } from '../../helpers/memcached-settings';
import { inc, rejection } from '../../helpers/store-calls';

let servers: MemcachedServer[] = [];
const run = `${process.pid}_${Date.now()}`;

beforeAll(async () => {
  servers = await Promise.all([MemcachedServer.start(), MemcachedServer.start()]);
});

afterAll(async () => {
  for (const server of servers) await server.stop();
});

async function openStore(
  env: Record<string, string>,
  stats?: StatsStore,
): Promise<MemcachedCounterStore> {
  // Generous, so a loaded machine does not fail a call; the timeout has its own test.
  return MemcachedCounterStore.open(memcacheSettings({ MEMCACHE_TIMEOUT: '5s', ...env }), {
    logger: silentLogger,
    ...(stats === undefined ? {} : { stats }),
  });
}

function counter(stats: StatsStore, name: string): number {
  return stats.snapshot().counters.get(name) ?? 0;
}

const both = (): Record<string, string> => ({
  MEMCACHE_HOST_PORT: servers.map((s) => s.address).join(','),
});

describe('server choice', () => {
  it('puts each key on the server at CRC-32(key) mod 2, in MEMCACHE_HOST_PORT order', async () => {
    const store = await openStore(both());
    try {
      const keys = [`placement_a_${run}`, `placement_b_${run}`, `placement_c_${run}`, 'a', 'd'];
      for (const key of keys) await store.increment([inc(key, 3)]);
      const seen = new Set<number>();
      for (const key of keys) {
        const expected = crc32(key) % 2;
        seen.add(expected);
        expect({ key, on: expected, item: (await servers[expected]?.item(key))?.value }).toEqual({
          key,
          on: expected,
          item: '3',
        });
        expect({ key, other: await servers[1 - expected]?.item(key) }).toEqual({
          key,
          other: undefined,
        });
      }
      expect(seen.size).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('uses the checksum gomemcache uses (IEEE CRC-32): pinned values', () => {
    // The standard check value of CRC-32/ISO-HDLC, and keys checked with Python's zlib.crc32.
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('a')).toBe(3904355907); // odd: the second of two servers
    expect(crc32('d')).toBe(2564639436); // even: the first
    expect(crc32('domain_k_v_1700000000')).toBe(1133879238);
  });
});

describe("data the reference's client wrote", () => {
  it('counts on from a value added with the text protocol and keeps its expiry', async () => {
    const store = await openStore(both());
    try {
      const key = `from_reference_${run}`;
      const holder = servers[crc32(key) % 2];
      expect(await holder?.add(key, '5', 40)).toBe('STORED');
      expect(await store.increment([inc(key, 2, 3600)])).toEqual([7]);
      expect(await store.read([{ key, isPerSecond: false }])).toEqual([7]);
      const item = await holder?.item(key);
      expect(item?.value).toBe('7');
      expect(item?.ttlSeconds).toBeLessThanOrEqual(40);
    } finally {
      await store.close();
    }
  });

  it('stores a counter the reference reads: decimal text with the expiry set on creation', async () => {
    const store = await openStore(both());
    try {
      const key = `for_reference_${run}`;
      await store.increment([inc(key, 4, 120)]);
      const item = await servers[crc32(key) % 2]?.item(key);
      expect(item?.value).toBe('4');
      expect(item?.ttlSeconds).toBeGreaterThan(115);
      expect(item?.ttlSeconds).toBeLessThanOrEqual(120);
    } finally {
      await store.close();
    }
  });

  it('sends expiries over 30 days as a Unix time, so a year window lives for a year', async () => {
    const store = await openStore(both());
    try {
      const key = `yearly_${run}`;
      const year = 365 * 24 * 3600;
      await store.increment([inc(key, 1, year)]);
      const item = await servers[crc32(key) % 2]?.item(key);
      expect(item?.value).toBe('1');
      expect(item?.ttlSeconds).toBeGreaterThan(year - 10);
      // memcached converts a Unix time with its own whole-second clock: a second either way.
      expect(item?.ttlSeconds).toBeLessThanOrEqual(year + 1);
    } finally {
      await store.close();
    }
  });
});

describe('keys memcached cannot store', () => {
  it.each([
    [
      'longer than 250 bytes',
      `long_${'x'.repeat(251)}`,
      /is \d+ bytes long; memcached keys are at most 250 bytes/,
    ],
    ['with a space', 'd_k_two words_1', /contains a space at position 7/],
    [
      'with a control character',
      'd_k_tab\there_1',
      /contains control character 0x09 at position 7/,
    ],
  ])('refuses a key %s, sends nothing and counts it', async (_what, key, message) => {
    const stats = new StatsStore();
    const store = await openStore(both(), stats);
    try {
      const err = await rejection(store.increment([inc(`fine_${run}`), inc(key)]));
      expect(err.isTransient).toBe(false);
      expect(err.message).toMatch(/^memcache backend: key "/);
      expect(err.message).toMatch(message);
      expect(counter(stats, 'ratelimit.memcache.key_refused')).toBe(1);
      // Nothing of the request was counted, not even its storable key.
      for (const server of servers) expect(await server.item(`fine_${run}`)).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('accepts a 250-byte key', async () => {
    const store = await openStore(both());
    try {
      const key = `k${run}`.padEnd(250, 'z');
      expect(await store.increment([inc(key, 2)])).toEqual([2]);
    } finally {
      await store.close();
    }
  });
});

describe('a server that goes away', () => {
  it('fails the keys it holds, counts the errors, and counts on once it is back', async () => {
    const victim = await MemcachedServer.start();
    const stats = new StatsStore();
    const store = await openStore(
      { MEMCACHE_HOST_PORT: `${servers[0]?.address ?? ''},${victim.address}` },
      stats,
    );
    const changes: boolean[] = [];
    store.onConnectionChange((isConnected) => changes.push(isConnected));
    try {
      const onVictim = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        .map((i) => `victim_${run}_${i}`)
        .find((k) => crc32(k) % 2 === 1);
      const onSurvivor = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        .map((i) => `survivor_${run}_${i}`)
        .find((k) => crc32(k) % 2 === 0);
      if (onVictim === undefined || onSurvivor === undefined) throw new Error('no key found');
      expect(await store.increment([inc(onVictim)])).toEqual([1]);

      await victim.stop();
      const calls = await Promise.allSettled(
        Array.from({ length: 20 }, () => store.increment([inc(onVictim)])),
      );
      for (const call of calls) {
        expect(call.status).toBe('rejected');
        const reason = (call as PromiseRejectedResult).reason as StoreError;
        expect(reason).toBeInstanceOf(StoreError);
        expect(reason.isTransient).toBe(true);
        expect(reason.message).toContain(victim.address);
      }
      expect(counter(stats, 'ratelimit.memcache.increment.__code=error')).toBe(20);
      expect(store.isConnected()).toBe(false);
      // The other server's keys are unaffected.
      expect(await store.increment([inc(onSurvivor)])).toEqual([1]);

      await victim.restart();
      // A restarted memcached is empty: counting starts again from the first hit.
      await eventually(async () => (await store.increment([inc(onVictim)]))[0] === 1, {
        what: 'the restarted server to count',
      });
      expect(await store.increment([inc(onVictim)])).toEqual([2]);
      expect(store.isConnected()).toBe(true);
      expect(changes).toEqual([false, true]);
    } finally {
      await store.close();
      await victim.stop();
    }
  });

  it('fails a call to a server that stopped answering within MEMCACHE_TIMEOUT', async () => {
    const frozen = await MemcachedServer.start();
    const store = await openStore({
      MEMCACHE_HOST_PORT: frozen.address,
      MEMCACHE_TIMEOUT: '300ms',
    });
    try {
      expect(await store.increment([inc(`frozen_${run}`)])).toEqual([1]);
      frozen.pause();
      const started = Date.now();
      const err = await rejection(store.increment([inc(`frozen_${run}`)]));
      const tookMs = Date.now() - started;
      expect(err.isTransient).toBe(true);
      expect(err.message).toBe(`memcache backend: ${frozen.address}: no answer within 300 ms`);
      expect(tookMs).toBeGreaterThanOrEqual(290);
      expect(tookMs).toBeLessThan(3000);
      frozen.resume();
      await eventually(async () => (await store.increment([inc(`frozen_${run}`)]))[0] !== 0, {
        what: 'the thawed server to answer',
      });
    } finally {
      frozen.resume();
      await store.close();
      await frozen.stop();
    }
  });
});

describe('MEMCACHE_SRV', () => {
  it('resolves at start, refreshes every MEMCACHE_SRV_REFRESH and swaps the list whole', async () => {
    let answer: SrvRecord[] = [{ name: '127.0.0.1', port: servers[0]?.port ?? 0 }];
    let lookups = 0;
    const resolver = (name: string): Promise<SrvRecord[]> => {
      expect(name).toBe('_memcache._tcp.cache.test');
      lookups += 1;
      return answer.length === 0
        ? Promise.reject(new Error('SERVFAIL'))
        : Promise.resolve([...answer]);
    };
    const store = await MemcachedCounterStore.open(
      memcacheSettings({
        MEMCACHE_SRV: '_memcache._tcp.cache.test',
        MEMCACHE_SRV_REFRESH: '50ms',
        MEMCACHE_TIMEOUT: '5s',
      }),
      { logger: silentLogger, resolver },
    );
    try {
      const key = `srv_${run}_y`;
      const first = store.serverList.current;
      expect(first.addresses).toEqual([`127.0.0.1.:${servers[0]?.port ?? 0}`]);
      await store.increment([inc(key)]);
      expect((await servers[0]?.item(key))?.value).toBe('1');

      // The record gains the second server; the list is swapped on a later refresh.
      answer = servers.map((s) => ({ name: '127.0.0.1', port: s.port }));
      const expected = servers
        .map((s) => `127.0.0.1.:${s.port}`)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      await eventually(() => store.serverList.current.addresses.join() === expected.join(), {
        what: 'the refreshed server list',
      });
      const second = store.serverList.current;
      expect(second).not.toBe(first);
      // The pool of the server present in both lists is kept.
      expect(second.pools).toContain(first.pools[0]);
      const keys = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => `srv_${run}_${i}`);
      const used = new Set<number>();
      for (const k of keys) {
        await store.increment([inc(k)]);
        const address = expected[crc32(k) % 2];
        const holder = servers.findIndex((s) => `127.0.0.1.:${s.port}` === address);
        used.add(holder);
        expect({ k, value: (await servers[holder]?.item(k))?.value }).toEqual({ k, value: '1' });
      }
      expect(used).toEqual(new Set([0, 1]));

      // A failing lookup keeps the list that works.
      const before = lookups;
      answer = [];
      await eventually(() => lookups > before + 1, { what: 'failed lookups' });
      expect(store.serverList.current).toBe(second);
    } finally {
      await store.close();
    }
  });

  it('refuses to start when the SRV name does not resolve', async () => {
    const err = await rejection(
      MemcachedCounterStore.open(memcacheSettings({ MEMCACHE_SRV: '_m._tcp.none.test' }), {
        logger: silentLogger,
        resolver: () => Promise.reject(new Error('queryA ENOTFOUND')),
      }),
    );
    expect(err.message).toBe(
      'memcache backend: cannot find the memcached servers of MEMCACHE_SRV _m._tcp.none.test: queryA ENOTFOUND',
    );
  });
});
