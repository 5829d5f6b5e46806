// Assignments in the arithmetic Envoy's filter applies (envoyproxy/envoy main cb2a49b0,
// source/extensions/filters/http/rate_limit_quota/global_client_impl.cc): a token bucket's rate
// is tokens_per_fill / ToInt64Seconds(fill_interval) (createTokenBucketFromAction), at least one
// token a year (source/common/common/token_bucket_impl.cc, kMinFillRate); a bucket equal in
// max_tokens, tokens_per_fill and fill_interval.nanos is kept (protoTokenBucketsEq), and
// time_elapsed is whole seconds, which the service holds to its own receive times.
import fc from 'fast-check';
import {
  ENVOY_MIN_FILL_PER_SECOND,
  MAX_FILL_SECONDS,
  strategyOf,
  type AssignedStrategy,
} from '../../../src/quota';
import { coveredMs } from '../../../src/quota/elapsed';
import type { QuotaPolicy, QuotaUnit } from '../../../src/quota/rules';

const budget = (
  requestsPerUnit: number,
  maxTokens = requestsPerUnit,
  unit: QuotaUnit = 'SECOND',
): QuotaPolicy => ({
  kind: 'budget',
  strategy: 'token_bucket',
  requestsPerUnit,
  unit,
  maxTokens,
});

type TokenBucket = Extract<AssignedStrategy, { kind: 'token_bucket' }>;

/** The rate Envoy's AtomicTokenBucketImpl fills at, for this assignment. */
function envoyRate(s: AssignedStrategy): number {
  if (s.kind !== 'token_bucket') throw new Error(`not a token bucket: ${s.kind}`);
  const seconds = Math.trunc(s.fillSeconds + s.fillNanos / 1e9);
  return Math.max(s.tokensPerFill / seconds, ENVOY_MIN_FILL_PER_SECOND);
}

/** protoTokenBucketsEq: max_tokens, tokens_per_fill and fill_interval.nanos, not the seconds. */
const envoyEq = (a: TokenBucket, b: TokenBucket): boolean =>
  a.maxTokens === b.maxTokens && a.tokensPerFill === b.tokensPerFill && a.fillNanos === b.fillNanos;

const tokenBucket = (s: AssignedStrategy): TokenBucket => {
  if (s.kind !== 'token_bucket') throw new Error(`not a token bucket: ${s.kind}`);
  return s;
};

test('a share is a token bucket in whole seconds that Envoy fills within 2% of it, never above', () => {
  fc.assert(
    fc.property(fc.double({ min: 0.001, max: 1e6, noNaN: true }), (share) => {
      const s = tokenBucket(strategyOf(budget(1e6), share, 1));
      expect(Number.isInteger(s.tokensPerFill) && s.tokensPerFill >= 1).toBe(true);
      expect(Number.isInteger(s.fillSeconds) && s.fillSeconds >= 1).toBe(true);
      expect(envoyRate(s)).toBeLessThanOrEqual(share * (1 + 1e-9));
      expect(envoyRate(s)).toBeGreaterThanOrEqual(share * 0.98);
    }),
  );
  // The figures: 10 a second (was 1 token every 100 ms: 0 s to Envoy, unlimited) and
  // 0.4 a second (was 1 every 2.5 s: 2 s to Envoy, 25% over).
  expect(envoyRate(strategyOf(budget(30), 10, 1))).toBe(10);
  expect(envoyRate(strategyOf(budget(30), 0.4, 1))).toBe(0.4);
});

test("any two rates are token buckets Envoy's equality tells apart, with a valid Duration", () => {
  const perSecondArb = fc.double({ min: ENVOY_MIN_FILL_PER_SECOND, max: 1e7, noNaN: true });
  const maxTokensArb = fc.integer({ min: 1, max: 3 });
  fc.assert(
    fc.property(perSecondArb, perSecondArb, maxTokensArb, (r1, r2, maxTokens) => {
      const a = tokenBucket(strategyOf(budget(1), r1, maxTokens));
      const b = tokenBucket(strategyOf(budget(1), r2, maxTokens));
      for (const s of [a, b]) {
        expect(Number.isInteger(s.fillNanos) && s.fillNanos >= 0 && s.fillNanos < 1e9).toBe(true);
        expect(s.fillSeconds).toBeLessThanOrEqual(MAX_FILL_SECONDS);
      }
      // Equal to Envoy only when Envoy's rates are equal: a change of rate is always taken.
      if (envoyRate(a) !== envoyRate(b)) expect(envoyEq(a, b)).toBe(false);
      if (envoyEq(a, b)) expect(envoyRate(a)).toBe(envoyRate(b));
    }),
  );
  // The case: 1/s alone, then 0.5/s with the same one token: 50 every 50 s, then 100 s.
  const alone = tokenBucket(strategyOf(budget(1), 1, 1));
  const half = tokenBucket(strategyOf(budget(1), 0.5, 1));
  expect([alone.tokensPerFill, half.tokensPerFill]).toEqual([50, 50]);
  expect(envoyEq(alone, half)).toBe(false);
});

test('tiny shares: below one token a year, or without a whole token, Envoy is told to deny', () => {
  const year = budget(1, 1, 'YEAR');
  // One a year is Envoy's least rate: held to it.
  expect(envoyRate(strategyOf(year, 1, 1))).toBeLessThanOrEqual(ENVOY_MIN_FILL_PER_SECOND);
  // Half a token a year would run at one a year: denied.
  expect(strategyOf(year, 0.5, 1)).toEqual({ kind: 'blanket', rule: 'DENY_ALL' });
  // No whole token of the rule's max_tokens: Envoy's bucket could never hold one.
  expect(strategyOf(budget(10), 0.4, 0)).toEqual({ kind: 'blanket', rule: 'DENY_ALL' });
  // 1.5 a year: within 2% of it and never above.
  const r = 1.5 * ENVOY_MIN_FILL_PER_SECOND;
  expect(envoyRate(strategyOf(budget(2, 1, 'YEAR'), 1.5, 1))).toBeLessThanOrEqual(r);
  expect(envoyRate(strategyOf(budget(2, 1, 'YEAR'), 1.5, 1))).toBeGreaterThan(r * 0.97);
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
