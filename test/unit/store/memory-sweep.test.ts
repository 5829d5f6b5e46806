// The memory store's background sweep: it drops expired keys a slice per event-loop turn, so a
// large map never holds the event loop for one long pass; the map itself is sharded.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore } from '../../../src/store/memory/memory-store';
import { ShardedMap } from '../../../src/store/memory/sharded-map';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('drops expired keys a shard at a time, with turns for requests in between', async () => {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCounterStore({ clock, sweepIntervalMs: 5 });
  const expiring = 50_000;
  try {
    store.incrementNow(
      Array.from({ length: expiring }, (_, i) => ({
        key: `old${i}`,
        hits: 1,
        ttlSeconds: 1,
        isPerSecond: false,
        isNegative: false,
      })),
    );
    store.incrementNow([
      { key: 'live', hits: 7, ttlSeconds: 60, isPerSecond: false, isNegative: false },
    ]);
    clock.advance(2000);
    const sizes: number[] = [];
    // Bounded: the pass needs a few slices after the first interval tick.
    for (let i = 0; i < 10_000 && store.size > 1; i++) {
      await turn();
      if (sizes[sizes.length - 1] !== store.size) sizes.push(store.size);
    }
    expect(store.size).toBe(1);
    // The keys went in many small steps, none near the whole pass.
    const steps = [expiring + 1, ...sizes].map((size, i, all) => (all[i - 1] ?? size) - size);
    expect(sizes.length).toBeGreaterThanOrEqual(5);
    expect(Math.max(...steps)).toBeLessThanOrEqual(10_000);
    expect(await store.read([{ key: 'live', isPerSecond: false }])).toEqual([7]);
  } finally {
    await store.close();
  }
});

it('spreads keys over its shards and finds each again', () => {
  const map = new ShardedMap<number>();
  for (let i = 0; i < 6400; i++) map.set(`domain_key_value${i}_1700000000`, i);
  expect(map.size).toBe(6400);
  expect(map.get('domain_key_value4242_1700000000')).toBe(4242);
  const perShard = map.shardSizes();
  expect(perShard).toHaveLength(256);
  // 25 a shard on average; a poor hash would leave some shards with most of the keys.
  expect(Math.max(...perShard)).toBeLessThan(60);
  expect(map.delete('domain_key_value1_1700000000')).toBe(true);
  expect(map.get('domain_key_value1_1700000000')).toBeUndefined();
});

it('keeps its size through new keys, replaced values, deletions and clear', () => {
  const map = new ShardedMap<number>();
  map.set('a', 1);
  map.set('b', 2);
  map.set('a', 3);
  expect(map.size).toBe(2);
  expect(map.delete('missing')).toBe(false);
  expect(map.delete('a')).toBe(true);
  expect(map.delete('a')).toBe(false);
  expect(map.size).toBe(1);
  expect(map.size).toBe(map.shardSizes().reduce((sum, n) => sum + n, 0));
  map.clear();
  expect(map.size).toBe(0);
});
