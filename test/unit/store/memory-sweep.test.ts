// The memory store's background sweep: it drops expired keys a slice per event-loop turn, so a
// large table never holds the event loop for one long pass; the table itself is sharded.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore } from '../../../src/store/memory/memory-store';
import { CounterTable } from '../../../src/store/memory/counter-table';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

it('drops expired keys a shard at a time, with turns for requests in between', async () => {
  const clock = new ManualClock(1_000_000);
  const store = new MemoryCounterStore({ clock, sweepIntervalMs: 5 });
  const expiring = 50_000;
  try {
    store.increment(
      Array.from({ length: expiring }, (_, i) => ({
        key: `old${i}`,
        hits: 1,
        ttlSeconds: 1,
        isPerSecond: false,
        isNegative: false,
      })),
    );
    store.increment([
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
    expect(store.read([{ key: 'live', isPerSecond: false }])).toEqual([7]);
  } finally {
    await store.close();
  }
});

it('spreads keys over its shards and finds each again', () => {
  const table = new CounterTable();
  for (let i = 0; i < 6400; i++) table.set(`domain_key_value${i}_1700000000`, i, 1000 + i);
  expect(table.size).toBe(6400);
  const at = table.find('domain_key_value4242_1700000000');
  expect([table.value(at), table.expiresAtMs(at)]).toEqual([4242, 5242]);
  const perShard = table.shardSizes();
  expect(perShard).toHaveLength(256);
  // 25 a shard on average; a poor hash would leave some shards with most of the keys.
  expect(Math.max(...perShard)).toBeLessThan(60);
  expect(table.delete('domain_key_value1_1700000000')).toBe(true);
  expect(table.find('domain_key_value1_1700000000')).toBe(-1);
});

it('keeps its size through new keys, replaced values, deletions and clear', () => {
  const table = new CounterTable();
  table.set('a', 1, 10);
  table.set('b', 2, 20);
  table.set('a', 3, 30);
  expect(table.size).toBe(2);
  expect(table.value(table.find('a'))).toBe(3);
  expect(table.delete('missing')).toBe(false);
  expect(table.delete('a')).toBe(true);
  expect(table.delete('a')).toBe(false);
  expect(table.size).toBe(1);
  expect(table.size).toBe(table.shardSizes().reduce((sum, n) => sum + n, 0));
  table.clear();
  expect([table.size, table.find('b')]).toEqual([0, -1]);
});

it('agrees with a Map through growth, deletions that move probed keys, and shrinking', () => {
  // Deterministic choices (a linear congruential generator), so a failure can be replayed.
  let seed = 12345;
  const next = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const table = new CounterTable();
  const model = new Map<string, [number, number]>();
  const check = (): void => {
    expect(table.size).toBe(model.size);
    for (const [key, [value, expires]] of model) {
      const at = table.find(key);
      expect([key, table.value(at), table.expiresAtMs(at)]).toEqual([key, value, expires]);
    }
  };
  // Up to 20,000 keys drawn from 30,000 names: tables grow, keys collide and wrap around.
  for (let step = 0; step < 60_000; step++) {
    const key = `k${next(30_000)}`;
    if (next(3) === 0) {
      expect(table.delete(key)).toBe(model.delete(key));
    } else {
      const value = next(1_000_000);
      const expires = 1.7e12 + next(1_000_000);
      table.set(key, value, expires);
      model.set(key, [value, expires]);
    }
    if (step % 15_000 === 0) check();
  }
  check();
  // Most keys go: each shard halves as it empties, and what is left is still found.
  const keys = [...model.keys()];
  for (const key of keys.slice(100)) {
    expect(table.delete(key)).toBe(true);
    model.delete(key);
  }
  check();
  for (const key of keys.slice(100)) expect(table.find(key)).toBe(-1);
});
