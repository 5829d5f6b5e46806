// The local over-limit cache never grows past its size and forgets keys when their window ends.
import { OverLimitCache } from '../../../src/engine';
import { ManualClock } from '../../../src/lib/clock';

it('remembers keys until their time passes', () => {
  const clock = new ManualClock(0);
  const cache = new OverLimitCache(10_000, clock);
  cache.add('a', 2);
  expect(cache.has('a')).toBe(true);
  clock.advance(1999);
  expect(cache.has('a')).toBe(true);
  clock.advance(1);
  expect(cache.has('a')).toBe(false);
  expect(cache.size).toBe(0);
});

it('never holds more than its size in bytes, dropping the oldest first', () => {
  const clock = new ManualClock(0);
  const cache = new OverLimitCache(1000, clock);
  for (let i = 0; i < 1000; i++) {
    cache.add(`domain_key_value-${i}_1700000000`, 60);
    expect(cache.sizeBytes).toBeLessThanOrEqual(1000);
  }
  expect(cache.size).toBeGreaterThan(0);
  expect(cache.has('domain_key_value-999_1700000000')).toBe(true);
  expect(cache.has('domain_key_value-0_1700000000')).toBe(false);
  expect(cache.evictions).toBe(1000 - cache.size);
});

it('ignores a key larger than the whole cache', () => {
  const cache = new OverLimitCache(64, new ManualClock(0));
  cache.add('x'.repeat(100), 60);
  expect(cache.size).toBe(0);
  expect(cache.sizeBytes).toBe(0);
});

it('counts a key added twice once', () => {
  const cache = new OverLimitCache(10_000, new ManualClock(0));
  cache.add('k', 60);
  const bytes = cache.sizeBytes;
  cache.add('k', 60);
  expect(cache.sizeBytes).toBe(bytes);
  expect(cache.size).toBe(1);
});

it('counts lookups, hits, misses, expiries, overwrites and evictions for its gauges', () => {
  const clock = new ManualClock(0);
  const cache = new OverLimitCache(200, clock);
  cache.add('a', 1);
  cache.add('a', 1);
  cache.has('a');
  cache.has('b');
  clock.advance(1000);
  cache.has('a');
  for (let i = 0; i < 10; i++) cache.add(`key-${i}`, 60);
  expect({
    lookups: cache.lookups,
    hits: cache.hits,
    misses: cache.misses,
    expired: cache.expired,
    overwrites: cache.overwrites,
  }).toEqual({
    lookups: 3,
    hits: 1,
    misses: 2,
    expired: 1,
    overwrites: 1,
  });
  expect(cache.evictions).toBeGreaterThan(0);
});

it('reports the mean Unix second of its entries last access, and 0 when empty', () => {
  const clock = new ManualClock(1_700_000_000_000);
  const cache = new OverLimitCache(10_000, clock);
  expect(cache.averageAccessSec).toBe(0);
  cache.add('a', 60);
  clock.advance(10_000);
  cache.add('b', 60);
  expect(cache.averageAccessSec).toBe(1_700_000_005);
  clock.advance(10_000);
  expect(cache.has('a')).toBe(true);
  expect(cache.averageAccessSec).toBe(1_700_000_015);
  clock.advance(60_000);
  expect(cache.has('a')).toBe(false);
  expect(cache.has('b')).toBe(false);
  expect(cache.averageAccessSec).toBe(0);
});
