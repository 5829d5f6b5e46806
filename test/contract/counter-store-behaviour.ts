// The behaviour every CounterStore must have, as a suite each backend's test file runs:
// memory in the unit project (test/contract/memory.test.ts), servers in the backends project.
import type { StoreFixture } from '../helpers/stores';

export function counterStoreBehaviour(name: string, make: () => Promise<StoreFixture>): void {
  describe(`${name} counter store`, () => {
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
          Promise.resolve(
            f.store.increment([
              { key: a, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false },
            ]),
          ),
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
}
