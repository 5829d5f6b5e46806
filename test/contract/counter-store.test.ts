// One behaviour suite run against every CounterStore: memory always, Redis with a real server.
import { RedisServer } from '../helpers/redis-server';
import { memoryFixture, redisFixture, type StoreFixture } from '../helpers/stores';
import { describeCounterStoreContract } from './counter-store-contract';

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

const fixtures: [string, () => Promise<StoreFixture>][] = [
  ['memory', () => Promise.resolve(memoryFixture())],
  ['redis', () => redisFixture(redis)],
];

describe.each(fixtures)('%s counter store', (_name, make) => {
  describeCounterStoreContract(make);
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
