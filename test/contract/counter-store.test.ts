// One behaviour suite run against every CounterStore: memory always, Redis and memcached real.
import { MemcachedServer } from '../helpers/memcached-server';
import { RedisServer } from '../helpers/redis-server';
import {
  memcachedFixture,
  memoryFixture,
  redisFixture,
  type StoreFixture,
} from '../helpers/stores';

let redis: RedisServer;
let memcached: MemcachedServer[] = [];

beforeAll(async () => {
  redis = await RedisServer.start();
  memcached = await Promise.all([MemcachedServer.start(), MemcachedServer.start()]);
});

afterAll(async () => {
  await redis.destroy();
  for (const server of memcached) await server.stop();
});

const fixtures: [string, () => Promise<StoreFixture>][] = [
  ['memory', () => Promise.resolve(memoryFixture())],
  ['redis', () => redisFixture(redis)],
  ['memcached (two servers)', () => memcachedFixture(memcached)],
];

describe.each(fixtures)('%s counter store', (_name, make) => {
  let f: StoreFixture;
  let n = 0;
  const key = (): string => `contract_${process.pid}_${++n}_${Date.now()}`;

  beforeEach(async () => {
    f = await make();
  });
  afterEach(async () => {
    await f.close();
  });

  it('adds hits and returns the values after, in order', async () => {
    const a = key();
    const b = key();
    expect(
      await f.store.increment([
        { key: a, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false },
        { key: b, hits: 5, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]),
    ).toEqual([1, 5]);
    expect(
      await f.store.increment([
        { key: a, hits: 3, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]),
    ).toEqual([4]);
    expect(await f.rawValue(a)).toBe(4);
    expect(await f.rawValue(b)).toBe(5);
  });

  it('sets the expiry on every increment, or at creation where the backend does so', async () => {
    const a = key();
    await f.store.increment([
      { key: a, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false },
    ]);
    expect(await f.ttlSeconds(a)).toBeGreaterThan(55);
    expect(await f.ttlSeconds(a)).toBeLessThanOrEqual(60);
    await f.store.increment([
      { key: a, hits: 1, ttlSeconds: 3600, isPerSecond: false, isNegative: false },
    ]);
    if (f.expirySetOn === 'every-increment') {
      expect(await f.ttlSeconds(a)).toBeGreaterThan(3500);
    } else {
      // The reference's memcached backend sets the expiry only when it adds the key.
      expect(await f.ttlSeconds(a)).toBeLessThanOrEqual(60);
    }
  });

  it('counts 0 hits without changing the value', async () => {
    const a = key();
    await f.store.increment([
      { key: a, hits: 7, ttlSeconds: 60, isPerSecond: false, isNegative: false },
    ]);
    expect(
      await f.store.increment([
        { key: a, hits: 0, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]),
    ).toEqual([7]);
  });

  it('subtracts negative hits and floors at 0', async () => {
    const a = key();
    await f.store.increment([
      { key: a, hits: 5, ttlSeconds: 60, isPerSecond: false, isNegative: false },
    ]);
    expect(
      await f.store.increment([
        { key: a, hits: 2, ttlSeconds: 60, isPerSecond: false, isNegative: true },
      ]),
    ).toEqual([3]);
    expect(
      await f.store.increment([
        { key: a, hits: 10, ttlSeconds: 60, isPerSecond: false, isNegative: true },
      ]),
    ).toEqual([0]);
    expect(await f.rawValue(a)).toBe(0);
    expect(await f.ttlSeconds(a)).toBeGreaterThan(50);
  });

  it('does not create a key for a refund of nothing', async () => {
    const a = key();
    expect(
      await f.store.increment([
        { key: a, hits: 2, ttlSeconds: 60, isPerSecond: false, isNegative: true },
      ]),
    ).toEqual([0]);
    expect(await f.rawValue(a)).toBeUndefined();
  });

  it('reads current values, 0 for missing keys', async () => {
    const a = key();
    await f.store.increment([
      { key: a, hits: 9, ttlSeconds: 60, isPerSecond: false, isNegative: false },
    ]);
    expect(
      await f.store.read([
        { key: a, isPerSecond: false },
        { key: key(), isPerSecond: false },
      ]),
    ).toEqual([9, 0]);
  });

  it('serves many concurrent requests with the right values', async () => {
    const a = key();
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        f.store.increment([
          { key: a, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false },
        ]),
      ),
    );
    expect(results.map((r) => r[0]).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
  });

  it('reports itself connected', () => {
    expect(f.store.isConnected()).toBe(true);
  });
});

describe('memory counter store', () => {
  it('forgets a key when its expiry passes and drops it from memory on sweep', async () => {
    const f = memoryFixture();
    await f.store.increment([
      { key: 'k', hits: 3, ttlSeconds: 2, isPerSecond: false, isNegative: false },
    ]);
    f.clock.advance(1999);
    expect(await f.store.read([{ key: 'k', isPerSecond: false }])).toEqual([3]);
    f.clock.advance(1);
    expect(await f.store.read([{ key: 'k', isPerSecond: false }])).toEqual([0]);
    await f.store.increment([
      { key: 'old', hits: 1, ttlSeconds: 1, isPerSecond: false, isNegative: false },
    ]);
    f.clock.advance(5000);
    const store = f.store as unknown as { sweep(): void; size: number };
    store.sweep();
    expect(store.size).toBe(0);
    await f.close();
  });
});
