// Assignments in the arithmetic Envoy's filter applies (global_client_impl.cc): a token bucket's
// rate is tokens_per_fill / ToInt64Seconds(fill_interval), a bucket equal but for its seconds is
// kept, and time_elapsed is whole seconds, which the service holds to its own receive times.
import fc from 'fast-check';
import { strategyOf, type AssignedStrategy } from '../../../src/quota';
import { coveredMs } from '../../../src/quota/elapsed';
import type { QuotaPolicy } from '../../../src/quota/rules';

const budget = (requestsPerUnit: number, maxTokens = requestsPerUnit): QuotaPolicy => ({
  kind: 'budget',
  strategy: 'token_bucket',
  requestsPerUnit,
  unit: 'SECOND',
  maxTokens,
});

/** The rate Envoy's AtomicTokenBucketImpl fills at, for this assignment. */
function envoyRate(s: AssignedStrategy): number {
  if (s.kind !== 'token_bucket') throw new Error(`not a token bucket: ${s.kind}`);
  return s.tokensPerFill / Math.trunc(s.fillIntervalMs / 1000);
}

test('a share is a token bucket in whole seconds that Envoy fills within 2% of it, never above', () => {
  fc.assert(
    fc.property(fc.double({ min: 0.001, max: 1e6, noNaN: true }), (share) => {
      const s = strategyOf(budget(1e6), share);
      if (s.kind !== 'token_bucket') throw new Error(s.kind);
      expect(Number.isInteger(s.tokensPerFill) && s.tokensPerFill >= 1).toBe(true);
      expect(s.fillIntervalMs % 1000).toBe(0);
      expect(s.fillIntervalMs).toBeGreaterThanOrEqual(1000);
      expect(envoyRate(s)).toBeLessThanOrEqual(share * (1 + 1e-9));
      expect(envoyRate(s)).toBeGreaterThanOrEqual(share * 0.98);
    }),
  );
  // The figures: 10 a second (was 1 token every 100 ms: 0 s to Envoy, unlimited) and
  // 0.4 a second (was 1 every 2.5 s: 2 s to Envoy, 25% over).
  expect(envoyRate(strategyOf(budget(30), 10))).toBe(10);
  expect(envoyRate(strategyOf(budget(30), 0.4))).toBe(0.4);
});

test('a new rate that Envoy would take for the bucket it holds changes its tokens', () => {
  const policy = budget(100, 1);
  // 10/s and 50/6 s both round to 50 tokens with one max token: only the seconds differ.
  const first = strategyOf(policy, 10);
  const second = strategyOf(policy, 50 / 6, first);
  expect(first).toMatchObject({ tokensPerFill: 50, fillIntervalMs: 5000, maxTokens: 1 });
  expect(second).toMatchObject({ tokensPerFill: 100, fillIntervalMs: 12_000, maxTokens: 1 });
  expect(envoyRate(second)).toBeCloseTo(50 / 6, 9);
});

test("time covered: Envoy's truncated seconds held to the receive times, a claim checked", () => {
  // The first report of a new bucket (0 s) measures nothing; a first one after a reconnect does.
  expect(coveredMs(0, undefined)).toBeUndefined();
  expect(coveredMs(5000, undefined)).toBe(5000);
  // A bucket made 2.7 s before the tick: Envoy says 2 s, the receive times say 2.7.
  expect(coveredMs(2000, 2700)).toBe(2700);
  // Jitter never takes the estimate out of [reported, reported + 1 s).
  expect(coveredMs(5000, 4990)).toBe(5000);
  expect(coveredMs(5000, 6200)).toBe(6000);
  // 10,000 years claimed 5 s after the last report: the receive times are believed.
  expect(coveredMs(10_000 * 365 * 86_400_000, 5000)).toBe(5000);
  // Never more than ten minutes, whatever a first report claims.
  expect(coveredMs(10_000 * 365 * 86_400_000, undefined)).toBe(600_000);
});
