// Decision scenarios for what goes beyond the reference: sliding windows, token buckets and
// several limits on one descriptor, run through the engine against every backend.
import type { DescriptorStatus } from '../../src/engine';
import { descriptor as d } from '../helpers/engine';
import { ok, over, type Scenario } from './decision-scenarios';

/** The clock's start in microseconds, where token buckets count. */
const NOW_US = 1_700_000_000_000_000;

function named(status: DescriptorStatus, name: string): DescriptorStatus {
  return status.currentLimit === undefined
    ? status
    : { ...status, currentLimit: { ...status.currentLimit, name } };
}

const sliding = `
domain: slide
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: sliding_window }
  - key: refund
    rate_limit: { unit: minute, requests_per_unit: 5, algorithm: sliding_window }
`;

const bucket = `
domain: tb
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 2, algorithm: token_bucket, burst: 4 }
  - key: slow
    rate_limit: { unit: minute, requests_per_unit: 1, algorithm: token_bucket }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1, algorithm: token_bucket }
`;

const multi = `
domain: multi
descriptors:
  - key: k
    rate_limit: { unit: second, requests_per_unit: 2 }
    rate_limits:
      - unit: minute
        requests_per_unit: 3
        name: per_minute
`;

const k = (value: string) => [d([['k', value]])];

export const ALGORITHM_SCENARIOS: readonly Scenario[] = [
  {
    name: 'sliding window: the previous window weighs less as the current one runs',
    config: [sliding],
    domain: 'slide',
    steps: [
      // 20 s into the minute; no previous window.
      { descriptors: k('v'), hitsAddend: 6, overall: 'OK', statuses: [ok(4, 10, 'MINUTE', 40)] },
      // At the next window's edge the previous one counts whole: 6 + 1.
      {
        advanceMs: 40_000,
        descriptors: k('v'),
        overall: 'OK',
        statuses: [ok(3, 10, 'MINUTE', 60)],
      },
      // Half way: 6 × 0.5 + 6.
      {
        advanceMs: 30_000,
        descriptors: k('v'),
        hitsAddend: 5,
        overall: 'OK',
        statuses: [ok(1, 10, 'MINUTE', 30)],
      },
      // 3 + 8 = 11: over, and counted as the fixed window counts.
      {
        descriptors: k('v'),
        hitsAddend: 2,
        overall: 'OVER_LIMIT',
        statuses: [over(10, 'MINUTE', 30)],
      },
      // 6 × 0.25 + 9 = 10.5: still over.
      {
        advanceMs: 15_000,
        descriptors: k('v'),
        overall: 'OVER_LIMIT',
        statuses: [over(10, 'MINUTE', 15)],
      },
      // The next window: 9 + 1 = 10, exactly the limit.
      {
        advanceMs: 15_000,
        descriptors: k('v'),
        overall: 'OK',
        statuses: [ok(0, 10, 'MINUTE', 60)],
      },
    ],
    ruleStats: {
      'slide.k.total_hits': 16,
      'slide.k.over_limit': 2,
      'slide.k.near_limit': 3,
      'slide.k.within_limit': 13,
    },
    keys: {
      '{p}slide_k_v_1699999980': 6,
      '{p}slide_k_v_1700000040': 9,
      '{p}slide_k_v_1700000100': 1,
    },
    // The current window's key lives through the next window, where it is the previous one.
    ttls: { '{p}slide_k_v_1700000100': 120 },
  },
  {
    name: 'sliding window: negative hits refund the current window',
    config: [sliding],
    domain: 'slide',
    steps: [
      {
        descriptors: [d([['refund', 'r']])],
        hitsAddend: 3,
        overall: 'OK',
        statuses: [ok(2, 5, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['refund', 'r']], { isNegativeHits: true })],
        hitsAddend: 2,
        overall: 'OK',
        statuses: [ok(4, 5, 'MINUTE', 40)],
      },
    ],
    ruleStats: { 'slide.refund.total_hits': 3, 'slide.refund.total_negative_hits': 2 },
    keys: { '{p}slide_refund_r_1699999980': 1 },
  },
  {
    name: 'token bucket: a burst, a refused request that costs nothing, refill and refund',
    config: [bucket],
    domain: 'tb',
    steps: [
      { descriptors: k('v'), hitsAddend: 3, overall: 'OK', statuses: [ok(1, 2, 'SECOND', 2)] },
      // 2 more would pass the burst of 4: refused, and the one left stays.
      {
        descriptors: k('v'),
        hitsAddend: 2,
        overall: 'OVER_LIMIT',
        statuses: [{ ...over(2, 'SECOND', 2), limitRemaining: 1 }],
      },
      { descriptors: k('v'), overall: 'OK', statuses: [ok(0, 2, 'SECOND', 2)] },
      // Half a second refills one hit.
      { advanceMs: 500, descriptors: k('v'), overall: 'OK', statuses: [ok(0, 2, 'SECOND', 2)] },
      // Later than the TAT the bucket is full again.
      { advanceMs: 2500, descriptors: k('v'), overall: 'OK', statuses: [ok(3, 2, 'SECOND', 1)] },
      // A refund moves the TAT back to now: full, no key.
      {
        descriptors: [d([['k', 'v']], { isNegativeHits: true })],
        overall: 'OK',
        statuses: [ok(4, 2, 'SECOND', 0)],
      },
      { descriptors: k('v'), hitsAddend: 4, overall: 'OK', statuses: [ok(0, 2, 'SECOND', 2)] },
    ],
    ruleStats: {
      'tb.k.total_hits': 12,
      'tb.k.total_negative_hits': 1,
      'tb.k.over_limit': 1,
      'tb.k.near_limit': 4,
      'tb.k.within_limit': 10,
    },
    // The TAT in microseconds: 3 s after the start, plus 4 hits of 0.5 s.
    keys: { '{p}tb_k_v_tat_second': NOW_US + 5_000_000 },
    ttls: { '{p}tb_k_v_tat_second': 2 },
  },
  {
    name: 'token bucket in shadow mode: refused, answered OK, counted as shadow',
    config: [bucket],
    domain: 'tb',
    steps: [
      {
        descriptors: [d([['shadow', 's']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 60)],
      },
      {
        descriptors: [d([['shadow', 's']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 60)],
      },
    ],
    ruleStats: { 'tb.shadow.shadow_mode': 1, 'tb.shadow.over_limit': 1 },
    keys: { '{p}tb_shadow_s_tat_minute': NOW_US + 60_000_000 },
  },
  {
    name: 'token bucket with the local cache: over while not one hit fits, then asked again',
    config: [bucket],
    domain: 'tb',
    env: { LOCAL_CACHE_SIZE_IN_BYTES: '100000' },
    steps: [
      { descriptors: [d([['slow', 'x']])], overall: 'OK', statuses: [ok(0, 1, 'MINUTE', 60)] },
      {
        descriptors: [d([['slow', 'x']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 60)],
      },
      {
        descriptors: [d([['slow', 'x']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 60)],
      },
      {
        advanceMs: 60_000,
        descriptors: [d([['slow', 'x']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 60)],
      },
    ],
    ruleStats: { 'tb.slow.over_limit_with_local_cache': 1, 'tb.slow.over_limit': 2 },
  },
  {
    name: 'two limits on one descriptor: the refusing one, else the one with fewest remaining',
    config: [multi],
    domain: 'multi',
    steps: [
      { descriptors: k('v'), overall: 'OK', statuses: [ok(1, 2, 'SECOND', 1)] },
      { descriptors: k('v'), overall: 'OK', statuses: [ok(0, 2, 'SECOND', 1)] },
      { descriptors: k('v'), overall: 'OVER_LIMIT', statuses: [over(2, 'SECOND', 1)] },
      {
        advanceMs: 1000,
        descriptors: k('v'),
        overall: 'OVER_LIMIT',
        statuses: [named(over(3, 'MINUTE', 39), 'per_minute')],
      },
    ],
    ruleStats: {
      'multi.k.total_hits': 4,
      'multi.k.over_limit': 1,
      'multi.k.minute.total_hits': 4,
      'multi.k.minute.over_limit': 1,
    },
    keys: {
      '{p}multi_k_v_1700000001': 1,
      '{p}multi_k_v_1699999980_minute': 4,
    },
  },
  {
    name: 'two limits with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: the refused request spares the other limit',
    config: [multi],
    domain: 'multi',
    env: { STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true' },
    steps: [
      { descriptors: k('s'), hitsAddend: 2, overall: 'OK', statuses: [ok(0, 2, 'SECOND', 1)] },
      { descriptors: k('s'), overall: 'OVER_LIMIT', statuses: [over(2, 'SECOND', 1)] },
      {
        advanceMs: 1000,
        descriptors: k('s'),
        overall: 'OK',
        statuses: [named(ok(0, 3, 'MINUTE', 39), 'per_minute')],
      },
    ],
    keys: { '{p}multi_k_s_1699999980_minute': 3 },
  },
];
