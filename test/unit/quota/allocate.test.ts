// Max-min fair shares: properties over arbitrary budgets and demands, and worked examples.
import fc from 'fast-check';
import { fairShares, wholeShares, type Claim } from '../../../src/quota';

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

test('whole shares never add up to more than the budget and stay within one of the exact share', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const exact = fairShares(budget, claims);
      const whole = wholeShares(budget, exact);
      expect(sum(whole.values())).toBeLessThanOrEqual(budget);
      // Exact shares add up to a whole budget, so largest remainders hand it all out.
      expect(sum(whole.values())).toBe(budget);
      for (const [id, share] of exact) {
        const rounded = whole.get(id) ?? -1;
        expect(Number.isInteger(rounded)).toBe(true);
        expect(Math.abs(rounded - share)).toBeLessThan(1 + 1e-9);
      }
    }),
  );
});

test('rounding is the same whatever order the claims come in', () => {
  fc.assert(
    fc.property(budgetArb, claimsArb, (budget, claims) => {
      const forward = wholeShares(budget, fairShares(budget, claims));
      const backward = wholeShares(budget, fairShares(budget, [...claims].reverse()));
      expect(Object.fromEntries(backward)).toEqual(Object.fromEntries(forward));
    }),
  );
});
