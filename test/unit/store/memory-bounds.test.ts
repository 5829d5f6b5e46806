// The memory backend holds at most MEMORY_MAX_KEYS keys and sweeps only the keys that are due.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore, type CounterIncrement } from '../../../src/store';

const T0 = 1_700_000_000_000;

function hit(key: string, ttlSeconds: number, hits = 1): CounterIncrement {
  return { key, hits, ttlSeconds, isPerSecond: false, isNegative: false };
}

function stores(options: { maxKeys?: number } = {}) {
  const clock = new ManualClock(T0);
  let evictions = 0;
  const store = new MemoryCounterStore({
    clock,
    // The interval sweeper is not under test here: the test calls sweep() itself.
    sweepIntervalMs: 3_600_000,
    ...options,
    onEvict: () => {
      evictions += 1;
    },
  });
  return { clock, store, evictions: () => evictions };
}

describe('the memory store bound (MEMORY_MAX_KEYS)', () => {
  it('never holds more keys than its bound', async () => {
    const { store } = stores({ maxKeys: 100 });
    for (let i = 0; i < 1000; i++) store.increment([hit(`k${i}`, 60 + (i % 50))]);
    expect(store.size).toBe(100);
    await store.close();
  });

  it('evicts the key nearest its expiry to make room, and counts it', async () => {
    const { store, evictions } = stores({ maxKeys: 3 });
    store.increment([hit('hour', 3600), hit('second', 1), hit('minute', 60)]);
    store.increment([hit('day', 86_400)]);
    expect(store.read(['hour', 'second', 'minute', 'day'].map(read))).toEqual([1, 0, 1, 1]);
    expect(evictions()).toBe(1);
    await store.close();
  });

  it('takes an expired key before a live one when full, without counting an eviction', async () => {
    const { clock, store, evictions } = stores({ maxKeys: 2 });
    store.increment([hit('short', 1), hit('long', 3600)]);
    clock.advance(5000);
    store.increment([hit('new', 60)]);
    expect(store.read(['long', 'new'].map(read))).toEqual([1, 1]);
    expect(evictions()).toBe(0);
    await store.close();
  });

  it('follows a key whose expiry moved later: it is not the one evicted', async () => {
    const { clock, store } = stores({ maxKeys: 2 });
    store.increment([hit('moved', 2), hit('fixed', 30)]);
    clock.advance(1000);
    // A later increment pushes 'moved' out to an hour.
    store.increment([hit('moved', 3600)]);
    store.increment([hit('new', 60)]);
    expect(store.read(['moved', 'fixed', 'new'].map(read))).toEqual([2, 0, 1]);
    await store.close();
  });
});

describe('the memory store sweep', () => {
  it('drops expired keys a slice at a time and leaves live ones alone', async () => {
    const { clock, store } = stores();
    for (let i = 0; i < 30_000; i++) store.increment([hit(`due${i}`, 1)]);
    for (let i = 0; i < 5_000; i++) store.increment([hit(`live${i}`, 3600)]);
    clock.advance(3000);
    // A slice looks at no more keys than it is given: more are due, so it says so.
    expect(store.sweep(10_000)).toBe(true);
    expect(store.size).toBe(25_000);
    while (store.sweep(10_000));
    expect(store.size).toBe(5_000);
    await store.close();
  });

  it('sweeps in the background a slice at a time, letting other work run between slices', async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryCounterStore({ clock, sweepIntervalMs: 1 });
    // Enough keys that no machine deletes them all within one slice's 2 ms.
    for (let i = 0; i < 100_000; i++) store.increment([hit(`due${i}`, 1)]);
    store.increment([hit('live', 3600)]);
    clock.advance(3000);
    let turnsWhileSweeping = 0;
    for (let turn = 0; turn < 100_000 && store.size > 1; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (store.size > 1 && store.size < 100_001) turnsWhileSweeping += 1;
    }
    expect(store.size).toBe(1);
    expect(turnsWhileSweeping).toBeGreaterThan(1);
    await store.close();
  });

  it('looks only at due keys: with nothing due a sweep of one step finishes', async () => {
    const { clock, store } = stores();
    for (let i = 0; i < 10_000; i++) store.increment([hit(`live${i}`, 3600)]);
    clock.advance(10_000);
    expect(store.sweep(1)).toBe(false);
    expect(store.size).toBe(10_000);
    await store.close();
  });
});

function read(key: string) {
  return { key, isPerSecond: false };
}
