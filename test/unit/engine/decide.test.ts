// The decision arithmetic: thresholds and the split of a multi-hit request.
import { classify, nearLimitThreshold } from '../../../src/engine';

describe('nearLimitThreshold', () => {
  it.each([
    [10, 0.8, 8],
    [5, 0.8, 4],
    [3, 0.8, 2],
    [100, 0.9, 90],
    [7, 0.5, 3],
    [1, 0.8, 0],
    [0, 0.8, 0],
  ])('floor(%i × %f) = %i', (limit, ratio, expected) => {
    expect(nearLimitThreshold(limit, ratio)).toBe(expected);
  });
});

describe('classify', () => {
  it('reproduces the example of docs/compat.md: limit 10, hits 4, 5, 3, 2', () => {
    const steps = [
      classify(10, 0, 4, 4, 0.8, false),
      classify(10, 4, 9, 5, 0.8, false),
      classify(10, 9, 12, 3, 0.8, false),
      classify(10, 12, 14, 2, 0.8, false),
    ];
    expect(steps.map((s) => [s.isOverLimit, s.limitRemaining])).toEqual([
      [false, 6],
      [false, 1],
      [true, 0],
      [true, 0],
    ]);
    const sum = (pick: (s: (typeof steps)[number]) => number): number =>
      steps.reduce((n, s) => n + pick(s), 0);
    expect(sum((s) => s.nearLimitHits)).toBe(2);
    expect(sum((s) => s.overLimitHits)).toBe(4);
    expect(sum((s) => s.withinLimitHits)).toBe(9);
  });

  it('counts all hits as near when the counter was already past the near threshold', () => {
    expect(classify(10, 8, 10, 2, 0.8, false)).toMatchObject({
      isOverLimit: false,
      limitRemaining: 0,
      nearLimitHits: 2,
      withinLimitHits: 2,
    });
  });

  it('counts the part between the threshold and the limit as near when a request crosses both', () => {
    expect(classify(10, 2, 15, 13, 0.8, false)).toMatchObject({
      isOverLimit: true,
      overLimitHits: 5,
      nearLimitHits: 2,
      withinLimitHits: 0,
    });
  });

  it('reports shadow hits only for shadow rules', () => {
    expect(classify(10, 9, 12, 3, 0.8, true).shadowHits).toBe(2);
    expect(classify(10, 12, 15, 3, 0.8, true).shadowHits).toBe(3);
    expect(classify(10, 9, 12, 3, 0.8, false).shadowHits).toBe(0);
  });

  it('blocks everything at requests_per_unit 0', () => {
    expect(classify(0, 0, 1, 1, 0.8, false)).toMatchObject({
      isOverLimit: true,
      overLimitHits: 1,
      nearLimitHits: 0,
    });
  });
});
