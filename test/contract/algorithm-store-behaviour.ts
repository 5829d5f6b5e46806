// What every CounterStore does for sliding windows and token buckets, as a suite each backend's
// test file runs. Token bucket times are the caller's, so the suite sets them.
import type { StoreFixture } from '../helpers/stores';

/** 2023-11-14T22:13:20Z in microseconds, the memory fixture's clock. */
const NOW_US = 1_700_000_000_000_000;

export function algorithmStoreBehaviour(name: string, make: () => Promise<StoreFixture>): void {
  describe(`${name} counter store: sliding windows`, () => {
    let f: StoreFixture;
    let n = 0;
    const key = (): string => `sw_${process.pid}_${++n}_${Date.now()}`;
    beforeEach(async () => {
      f = await make();
    });
    afterEach(async () => {
      await f.close();
    });

    it('changes the current window and reads the previous one, in order', async () => {
      const [prevA, curA, curB] = [key(), key(), key()];
      await f.store.increment([
        { key: prevA, hits: 7, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]);
      const change = (current: string, previousKey: string, hits: number) => ({
        current: { key: current, hits, ttlSeconds: 120, isPerSecond: false, isNegative: false },
        previousKey,
      });
      expect(await f.store.slidingWindow([change(curA, prevA, 2), change(curB, key(), 1)])).toEqual(
        [
          { previous: 7, current: 2 },
          { previous: 0, current: 1 },
        ],
      );
      expect(await f.store.slidingWindow([change(curA, prevA, 3)])).toEqual([
        { previous: 7, current: 5 },
      ]);
      expect(await f.rawValue(prevA)).toBe(7);
      expect(await f.ttlSeconds(curA)).toBeGreaterThan(110);
    });

    it('refunds the current window, floored at 0', async () => {
      const [prev, cur] = [key(), key()];
      const change = (hits: number, isNegative: boolean) => ({
        current: { key: cur, hits, ttlSeconds: 120, isPerSecond: false, isNegative },
        previousKey: prev,
      });
      await f.store.slidingWindow([change(2, false)]);
      expect(await f.store.slidingWindow([change(5, true)])).toEqual([{ previous: 0, current: 0 }]);
    });
  });

  describe(`${name} counter store: token buckets`, () => {
    let f: StoreFixture;
    let n = 0;
    const key = (): string => `tb_${process.pid}_${++n}_${Date.now()}`;
    beforeEach(async () => {
      f = await make();
    });
    afterEach(async () => {
      await f.close();
    });
    // 3 a second (T rounded up to 333 334 µs), a bucket of 3.
    const step = (k: string, hits: number, nowUs = NOW_US, isNegative = false) => ({
      key: k,
      hits,
      nowUs,
      emissionUs: 333_334,
      toleranceUs: 1_000_002,
      isPerSecond: true,
      isNegative,
    });

    it('admits a burst, refuses without moving the TAT, refills, and expires when full', async () => {
      if (f.store.unsupported.token_bucket !== undefined) {
        await expect(f.store.tokenBucket([step(key(), 1)])).rejects.toThrow(
          f.store.unsupported.token_bucket,
        );
        return;
      }
      const a = key();
      expect(await f.store.tokenBucket([step(a, 2), step(a, 1)])).toEqual([
        { isAdmitted: true, tatUs: NOW_US + 666_668 },
        { isAdmitted: true, tatUs: NOW_US + 1_000_002 },
      ]);
      expect(await f.store.tokenBucket([step(a, 1)])).toEqual([
        { isAdmitted: false, tatUs: NOW_US + 1_000_002 },
      ]);
      expect(await f.store.tokenBucket([step(a, 1, NOW_US + 333_334)])).toEqual([
        { isAdmitted: true, tatUs: NOW_US + 1_333_336 },
      ]);
      expect(await f.rawValue(a)).toBe(NOW_US + 1_333_336);
      const ttl = await f.ttlSeconds(a);
      expect(ttl).toBeGreaterThanOrEqual(1);
      expect(ttl).toBeLessThanOrEqual(2);
    });

    it('reads without a key for 0 hits, and refunds toward a full bucket', async () => {
      if (f.store.unsupported.token_bucket !== undefined) return;
      const a = key();
      expect(await f.store.tokenBucket([step(a, 0)])).toEqual([{ isAdmitted: true, tatUs: 0 }]);
      expect(await f.rawValue(a)).toBeUndefined();
      await f.store.tokenBucket([step(a, 3)]);
      expect(await f.store.tokenBucket([step(a, 1, NOW_US, true)])).toEqual([
        { isAdmitted: true, tatUs: NOW_US + 666_668 },
      ]);
      expect(await f.store.tokenBucket([step(a, 5, NOW_US, true)])).toEqual([
        { isAdmitted: true, tatUs: 0 },
      ]);
      expect(await f.rawValue(a)).toBeUndefined();
    });

    it('serves concurrent steps on one key atomically', async () => {
      if (f.store.unsupported.token_bucket !== undefined) return;
      const a = key();
      const steps = await Promise.all(
        Array.from({ length: 10 }, () => Promise.resolve(f.store.tokenBucket([step(a, 1)]))),
      );
      expect(steps.flat().filter((s) => s.isAdmitted)).toHaveLength(3);
    });
  });
}
