// Max-min fair shares: properties over arbitrary budgets and demands, and worked examples.
import fc from 'fast-check';
import { fairShares, wholeParts, type Claim } from '../../../src/quota';

const claimsArb = fc
  .array(fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: undefined }), {
    minLength: 1,
    maxLength: 40,
  })
  .map((demands): Claim[] => demands.map((demand, i) => ({ id: `e${i}`, demand })));
const budgetArb = fc.integer({ min: 0, max: 1_000_000 });

const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

test('worked examples: the skewed fleet, room to spare, a newcomer', () => {
  const shares = fairShares(
    150,
    [10, 20, 40, 80, 160].map((demand, i) => ({ id: `e${i}`, demand })),
  );
  expect([...shares.values()]).toEqual([10, 20, 40, 40, 40]);
  // Every demand met: the rest is split equally on top.
  expect([
    ...fairShares(100, [
      { id: 'a', demand: 10 },
      { id: 'b', demand: 30 },
    ]).values(),
  ]).toEqual([40, 60]);
  // An Envoy whose demand is not known yet gets the level at once.
  const withNew = fairShares(100, [
    { id: 'a', demand: 90 },
    { id: 'b', demand: 5 },
    { id: 'new', demand: undefined },
  ]);
  expect(Object.fromEntries(withNew)).toEqual({ b: 5, a: 47.5, new: 47.5 });
});

test('the shares add up to the budget, every claim has one, none is negative', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const shares = fairShares(budget, claims);
      expect(shares.size).toBe(claims.length);
      for (const share of shares.values()) expect(share).toBeGreaterThanOrEqual(0);
      expect(Math.abs(sum(shares.values()) - budget)).toBeLessThanOrEqual(
        1e-6 * Math.max(1, budget),
      );
    }),
  );
});

test('max-min: a claim short of its demand has a share no smaller than any other', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const shares = fairShares(budget, claims);
      const max = Math.max(...shares.values());
      for (const claim of claims) {
        const share = shares.get(claim.id) ?? 0;
        if (share + 1e-6 < (claim.demand ?? Infinity))
          expect(share).toBeGreaterThanOrEqual(max - 1e-6 * Math.max(1, max));
      }
    }),
  );
});

test('an Envoy that needs less than an equal share keeps at least what it needs', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const shares = fairShares(budget, claims);
      const equal = budget / claims.length;
      for (const claim of claims) {
        if (claim.demand !== undefined && claim.demand <= equal)
          expect(shares.get(claim.id)).toBeGreaterThanOrEqual(claim.demand - 1e-6);
      }
    }),
  );
});

test('a newcomer gets at least an equal share of the budget at once', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const all = [...claims, { id: 'newcomer', demand: undefined }];
      expect(fairShares(budget, all).get('newcomer')).toBeGreaterThanOrEqual(
        budget / all.length - 1e-6,
      );
    }),
  );
});

const maxTokensArb = fc.integer({ min: 1, max: 4_294_967_295 });

test("whole parts of a rule's max_tokens never add up to more than it, each within one of its part", () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, maxTokensArb, (budget, claims, maxTokens) => {
      fc.pre(budget > 0);
      const shares = fairShares(budget, claims);
      const parts = wholeParts(maxTokens, shares, budget);
      expect(sum(parts.values())).toBeLessThanOrEqual(maxTokens);
      for (const [id, share] of shares) {
        const part = parts.get(id) ?? -1;
        expect(Number.isInteger(part) && part >= 0).toBe(true);
        expect(Math.abs(part - (share * maxTokens) / budget)).toBeLessThan(1 + 1e-6);
      }
    }),
  );
});

test('whole parts are exact: 7 of 100,000 is 7 tokens of 100,000, and past 2^52 too', () => {
  const parts = (total: number, weights: Record<string, number>, weightTotal: number) =>
    Object.fromEntries(wholeParts(total, new Map(Object.entries(weights)), weightTotal));
  // 100,000 × (7 / 100,000) is 6.999999999999999 in a double.
  expect(100_000 * (7 / 100_000)).toBeLessThan(7);
  expect(parts(100_000, { a: 7, b: 99_993 }, 100_000)).toEqual({ a: 7, b: 99_993 });
  // 4,294,967,295 × 4,000,000,001 is past 2^52: worked in integers.
  expect(parts(4_294_967_295, { a: 4_000_000_001, b: 294_967_294 }, 4_294_967_295)).toEqual({
    a: 4_000_000_001,
    b: 294_967_294,
  });
  // A max_tokens smaller than the Envoys: one token each to the largest shares, ties by id.
  expect(parts(1, { b: 0.5, a: 0.5 }, 1)).toEqual({ a: 1, b: 0 });
  expect(parts(10, { a: 2, b: 3, c: 5 }, 10)).toEqual({ a: 2, b: 3, c: 5 });
});

test('rounding is the same whatever order the claims come in', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, maxTokensArb, (budget, claims, maxTokens) => {
      const forward = wholeParts(maxTokens, fairShares(budget, claims), budget);
      const backward = wholeParts(maxTokens, fairShares(budget, [...claims].reverse()), budget);
      expect(Object.fromEntries(backward)).toEqual(Object.fromEntries(forward));
    }),
  );
});
