// The decision scenarios every counter store must pass, as a table: config, steps, expectations.
import type { Code, DescriptorStatus, RequestDescriptor } from '../../src/engine';
import { descriptor as d } from '../helpers/engine';

/** The clock starts here: 2023-11-14T22:13:20Z. Seconds into the minute 20, hour 800, day 80000. */
export const START_MS = 1_700_000_000_000;

type Unit = 'SECOND' | 'MINUTE' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'YEAR';

export function ok(remaining: number, rpu: number, unit: Unit, reset: number): DescriptorStatus {
  return {
    code: 'OK',
    currentLimit: { requestsPerUnit: rpu, unit, name: undefined },
    limitRemaining: remaining,
    durationUntilResetSeconds: reset,
  };
}
export function over(rpu: number, unit: Unit, reset: number): DescriptorStatus {
  return {
    code: 'OVER_LIMIT',
    currentLimit: { requestsPerUnit: rpu, unit, name: undefined },
    limitRemaining: 0,
    durationUntilResetSeconds: reset,
  };
}
export const NO_LIMIT: DescriptorStatus = {
  code: 'OK',
  currentLimit: undefined,
  limitRemaining: 0,
  durationUntilResetSeconds: undefined,
};
export const UNLIMITED: DescriptorStatus = {
  code: 'OK',
  currentLimit: undefined,
  limitRemaining: 4294967295,
  durationUntilResetSeconds: undefined,
};

export interface Step {
  readonly domain?: string;
  readonly descriptors: readonly RequestDescriptor[];
  readonly hitsAddend?: number;
  /** Milliseconds to move the clock before this step. */
  readonly advanceMs?: number;
  readonly overall: Code;
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeaders?: readonly (readonly [string, string])[];
  readonly requestHeaders?: readonly (readonly [string, string])[];
  readonly dynamicMetadata?: unknown;
}

export interface Scenario {
  readonly name: string;
  readonly config: readonly string[];
  readonly env?: Record<string, string>;
  readonly domain: string;
  readonly steps: readonly Step[];
  /** Counter values after the last step; names without the `ratelimit.service.rate_limit.` prefix. */
  readonly ruleStats?: Record<string, number>;
  /** Other counters after the last step, by full name. */
  readonly stats?: Record<string, number>;
  /** Counter values in the store after the last step, with `{p}` standing for the key prefix. */
  readonly keys?: Record<string, number | undefined>;
  /**
   * Seconds to live of keys after the last step, `{p}` standing for the key prefix. A backend
   * with its own clock (Redis) may be up to a second below.
   */
  readonly ttls?: Record<string, number>;
}

const basic = `
domain: basic
descriptors:
  - key: per_second
    rate_limit: { unit: second, requests_per_unit: 3 }
  - key: one_per_minute
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: per_day
    rate_limit: { unit: day, requests_per_unit: 20 }
  - key: blocked
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: free
  - key: unlimited
    rate_limit: { unlimited: true }
`;

const nested = `
domain: nested
descriptors:
  - key: tier
    value: gold
    descriptors:
      - key: user
        rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: tier
    descriptors:
      - key: user
        rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: region
    value: eu
    rate_limit: { unit: hour, requests_per_unit: 5 }
`;

const wildcard = `
domain: wild
descriptors:
  - key: path
    value: /api/*
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: path
    value: /files/*
    share_threshold: true
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: path
    value: /a*/b*/c
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;

const limit10 = `
domain: ten
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: quota
    quota_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: quota2
    quota_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
`;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'per-second limit counts down to OVER_LIMIT and resets with the next second',
    config: [basic],
    domain: 'basic',
    steps: [
      { descriptors: [d([['per_second', 'a']])], overall: 'OK', statuses: [ok(2, 3, 'SECOND', 1)] },
      { descriptors: [d([['per_second', 'a']])], overall: 'OK', statuses: [ok(1, 3, 'SECOND', 1)] },
      { descriptors: [d([['per_second', 'a']])], overall: 'OK', statuses: [ok(0, 3, 'SECOND', 1)] },
      {
        descriptors: [d([['per_second', 'a']])],
        overall: 'OVER_LIMIT',
        statuses: [over(3, 'SECOND', 1)],
      },
      {
        advanceMs: 1000,
        descriptors: [d([['per_second', 'a']])],
        overall: 'OK',
        statuses: [ok(2, 3, 'SECOND', 1)],
      },
    ],
    ruleStats: {
      'basic.per_second.total_hits': 5,
      'basic.per_second.over_limit': 1,
      'basic.per_second.within_limit': 4,
      'basic.per_second.near_limit': 1,
    },
    keys: { '{p}basic_per_second_a_1700000001': 1 },
  },
  {
    name: 'per-minute limit of one, with the seconds until the minute ends',
    config: [basic],
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['one_per_minute', 'x']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40)],
      },
      {
        advanceMs: 5000,
        descriptors: [d([['one_per_minute', 'x']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 35)],
      },
      {
        advanceMs: 35000,
        descriptors: [d([['one_per_minute', 'x']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 60)],
      },
    ],
    keys: { '{p}basic_one_per_minute_x_1699999980': 2, '{p}basic_one_per_minute_x_1700000040': 1 },
  },
  {
    name: 'hour and day limits, each value with its own counter',
    config: [basic],
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['per_hour', 'a']]), d([['per_day', 'a']])],
        overall: 'OK',
        statuses: [ok(9, 10, 'HOUR', 2800), ok(19, 20, 'DAY', 6400)],
      },
      {
        descriptors: [d([['per_hour', 'b']]), d([['per_day', 'a']])],
        overall: 'OK',
        statuses: [ok(9, 10, 'HOUR', 2800), ok(18, 20, 'DAY', 6400)],
      },
    ],
    keys: {
      '{p}basic_per_hour_a_1699999200': 1,
      '{p}basic_per_hour_b_1699999200': 1,
      '{p}basic_per_day_a_1699920000': 2,
    },
  },
  {
    name: 'several descriptors: one over the limit makes the whole answer OVER_LIMIT',
    config: [basic],
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['one_per_minute', 'm']]), d([['per_hour', 'm']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40), ok(9, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['one_per_minute', 'm']]), d([['per_hour', 'm']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40), ok(8, 10, 'HOUR', 2800)],
      },
    ],
  },
  {
    name: 'requests_per_unit 0 blocks; whitelisted and unknown descriptors pass uncounted; unlimited answers max uint32',
    config: [basic],
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['blocked', 'v']])],
        overall: 'OVER_LIMIT',
        statuses: [over(0, 'SECOND', 1)],
      },
      {
        descriptors: [
          d([['free', 'v']]),
          d([['nothing', 'v']]),
          d([
            ['per_second', 'v'],
            ['deeper', 'x'],
          ]),
        ],
        overall: 'OK',
        statuses: [NO_LIMIT, NO_LIMIT, NO_LIMIT],
      },
      { descriptors: [d([['unlimited', 'v']])], overall: 'OK', statuses: [UNLIMITED] },
    ],
    ruleStats: { 'basic.blocked.over_limit': 1, 'basic.unlimited.total_hits': 1 },
    keys: { '{p}basic_free_v_1700000000': undefined, '{p}basic_unlimited_v_1700000000': undefined },
  },
  {
    name: 'nested descriptors: exact value before key-only, level by level',
    config: [nested],
    domain: 'nested',
    steps: [
      {
        descriptors: [
          d([
            ['tier', 'gold'],
            ['user', 'u1'],
          ]),
        ],
        overall: 'OK',
        statuses: [ok(1, 2, 'MINUTE', 40)],
      },
      {
        descriptors: [
          d([
            ['tier', 'silver'],
            ['user', 'u1'],
          ]),
        ],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40)],
      },
      {
        descriptors: [
          d([
            ['tier', 'silver'],
            ['user', 'u1'],
          ]),
        ],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
      { descriptors: [d([['tier', 'gold']])], overall: 'OK', statuses: [NO_LIMIT] },
      {
        descriptors: [d([['region', 'eu']]), d([['region', 'us']])],
        overall: 'OK',
        statuses: [ok(4, 5, 'HOUR', 2800), NO_LIMIT],
      },
    ],
    ruleStats: {
      'nested.tier_gold.user.total_hits': 1,
      'nested.tier.user.total_hits': 2,
      'nested.tier.user.over_limit': 1,
    },
    keys: {
      '{p}nested_tier_gold_user_u1_1699999980': 1,
      '{p}nested_tier_silver_user_u1_1699999980': 2,
    },
  },
  {
    name: 'wildcards: distinct counters per value, one shared counter with share_threshold',
    config: [wildcard],
    domain: 'wild',
    steps: [
      {
        descriptors: [d([['path', '/api/users']])],
        overall: 'OK',
        statuses: [ok(1, 2, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['path', '/api/orders']])],
        overall: 'OK',
        statuses: [ok(1, 2, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['path', '/files/a']])],
        overall: 'OK',
        statuses: [ok(1, 2, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['path', '/files/b']])],
        overall: 'OK',
        statuses: [ok(0, 2, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['path', '/files/c']])],
        overall: 'OVER_LIMIT',
        statuses: [over(2, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['path', '/ax/by/c']]), d([['path', '/ax/by/d']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40), NO_LIMIT],
      },
    ],
    ruleStats: {
      'wild.path_/api/*.total_hits': 2,
      'wild.path_/files/*.total_hits': 3,
      'wild.path_/a*/b*/c.total_hits': 1,
    },
    keys: {
      '{p}wild_path_/api/users_1699999980': 1,
      '{p}wild_path_/api/orders_1699999980': 1,
      '{p}wild_path_/files/*_1699999980': 3,
      '{p}wild_path_/files/a_1699999980': undefined,
    },
  },
  {
    name: 'replaces: the replacing rule alone counts when both match',
    config: [
      `
domain: rep
descriptors:
  - key: a
    rate_limit: { unit: minute, requests_per_unit: 1, name: small }
  - key: b
    rate_limit:
      unit: minute
      requests_per_unit: 5
      replaces: [{ name: small }]
`,
    ],
    domain: 'rep',
    steps: [
      {
        descriptors: [d([['a', '1']]), d([['b', '1']])],
        overall: 'OK',
        statuses: [NO_LIMIT, ok(4, 5, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['a', '1']]), d([['b', '1']])],
        overall: 'OK',
        statuses: [NO_LIMIT, ok(3, 5, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['a', '1']])],
        overall: 'OK',
        statuses: [
          {
            ...ok(0, 1, 'MINUTE', 40),
            currentLimit: { requestsPerUnit: 1, unit: 'MINUTE', name: 'small' },
          },
        ],
      },
    ],
    keys: { '{p}rep_a_1_1699999980': 1, '{p}rep_b_1_1699999980': 2 },
  },
  {
    name: 'shadow mode answers OK but counts and reports what it let through',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['shadow', 's']])],
        hitsAddend: 2,
        overall: 'OK',
        statuses: [ok(0, 2, 'HOUR', 2800)],
      },
      { descriptors: [d([['shadow', 's']])], overall: 'OK', statuses: [ok(0, 2, 'HOUR', 2800)] },
      {
        descriptors: [d([['shadow', 's']])],
        hitsAddend: 3,
        overall: 'OK',
        statuses: [ok(0, 2, 'HOUR', 2800)],
      },
    ],
    ruleStats: {
      'ten.shadow.total_hits': 6,
      'ten.shadow.over_limit': 4,
      'ten.shadow.shadow_mode': 4,
      'ten.shadow.within_limit': 2,
    },
    keys: { '{p}ten_shadow_s_1699999200': 6 },
  },
  {
    name: 'global shadow mode turns the overall answer OK and counts it',
    config: [basic],
    env: { SHADOW_MODE: 'true' },
    domain: 'basic',
    steps: [
      { descriptors: [d([['blocked', 'g']])], overall: 'OK', statuses: [over(0, 'SECOND', 1)] },
      { descriptors: [d([['per_second', 'g']])], overall: 'OK', statuses: [ok(2, 3, 'SECOND', 1)] },
    ],
    stats: { 'ratelimit.service.global_shadow_mode': 1 },
  },
  {
    name: 'hits split across near, over and within limit as docs/compat.md shows',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['k', 'v']])],
        hitsAddend: 4,
        overall: 'OK',
        statuses: [ok(6, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'v']])],
        hitsAddend: 5,
        overall: 'OK',
        statuses: [ok(1, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'v']])],
        hitsAddend: 3,
        overall: 'OVER_LIMIT',
        statuses: [over(10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'v']])],
        hitsAddend: 2,
        overall: 'OVER_LIMIT',
        statuses: [over(10, 'HOUR', 2800)],
      },
    ],
    ruleStats: {
      'ten.k.total_hits': 14,
      'ten.k.near_limit': 2,
      'ten.k.over_limit': 4,
      'ten.k.within_limit': 9,
    },
    keys: { '{p}ten_k_v_1699999200': 14 },
  },
  {
    name: 'descriptor hits_addend overrides the request, and 0 checks without counting',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['k', 'h']], { hitsAddend: 7 })],
        hitsAddend: 2,
        overall: 'OK',
        statuses: [ok(3, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'h']], { hitsAddend: 0 })],
        hitsAddend: 5,
        overall: 'OK',
        statuses: [ok(3, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'h']])],
        hitsAddend: 3,
        overall: 'OK',
        statuses: [ok(0, 10, 'HOUR', 2800)],
      },
    ],
    keys: { '{p}ten_k_h_1699999200': 10 },
  },
  {
    name: 'negative hits refund, floor at 0 and always answer OK',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['k', 'n']])],
        hitsAddend: 12,
        overall: 'OVER_LIMIT',
        statuses: [over(10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'n']], { isNegativeHits: true, hitsAddend: 1 })],
        overall: 'OK',
        statuses: [ok(0, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'n']], { isNegativeHits: true })],
        hitsAddend: 4,
        overall: 'OK',
        statuses: [ok(3, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['k', 'n']], { isNegativeHits: true, hitsAddend: 50 })],
        overall: 'OK',
        statuses: [ok(10, 10, 'HOUR', 2800)],
      },
    ],
    ruleStats: { 'ten.k.total_hits': 12, 'ten.k.total_negative_hits': 55, 'ten.k.over_limit': 2 },
    keys: { '{p}ten_k_n_1699999200': 0 },
  },
  {
    name: 'the local cache answers over-limit keys without counting them again',
    config: [basic],
    env: { LOCAL_CACHE_SIZE_IN_BYTES: '100000' },
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['one_per_minute', 'lc']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['one_per_minute', 'lc']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['one_per_minute', 'lc']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['one_per_minute', 'lc']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
      {
        advanceMs: 40000,
        descriptors: [d([['one_per_minute', 'lc']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 60)],
      },
    ],
    ruleStats: {
      'basic.one_per_minute.over_limit': 3,
      'basic.one_per_minute.over_limit_with_local_cache': 2,
    },
    keys: {
      '{p}basic_one_per_minute_lc_1699999980': 2,
      '{p}basic_one_per_minute_lc_1700000040': 1,
    },
  },
  {
    name: 'stop-increment: when one descriptor would pass its limit the others are not counted',
    config: [basic],
    env: { STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true' },
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['one_per_minute', 's']]), d([['per_hour', 's']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40), ok(9, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['one_per_minute', 's']]), d([['per_hour', 's']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40), ok(9, 10, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['one_per_minute', 's']]), d([['per_hour', 's']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40), ok(9, 10, 'HOUR', 2800)],
      },
    ],
    keys: { '{p}basic_one_per_minute_s_1699999980': 3, '{p}basic_per_hour_s_1699999200': 1 },
  },
  {
    name: 'stop-increment: held-back hits split near/within as if they had landed, as the reference counts them',
    config: [basic],
    env: { STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true' },
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['per_day', 'w']], { hitsAddend: 17 })],
        overall: 'OK',
        statuses: [ok(3, 20, 'DAY', 6400)],
      },
      {
        // per_day stays at 17 (its 3 hits are held back); near_limit takes 17 - 16 of them.
        descriptors: [
          d([['one_per_minute', 'w']], { hitsAddend: 2 }),
          d([['per_day', 'w']], { hitsAddend: 3 }),
        ],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40), ok(3, 20, 'DAY', 6400)],
      },
    ],
    ruleStats: {
      'basic.per_day.total_hits': 20,
      'basic.per_day.within_limit': 20,
      'basic.per_day.near_limit': 2,
      'basic.one_per_minute.over_limit': 1,
      'basic.one_per_minute.near_limit': 1,
    },
    keys: { '{p}basic_one_per_minute_w_1699999980': 2, '{p}basic_per_day_w_1699920000': 17 },
  },
  {
    name: 'stop-increment with the local cache: a key over in the cache holds back every other',
    config: [basic],
    env: { STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true', LOCAL_CACHE_SIZE_IN_BYTES: '100000' },
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['one_per_minute', 't']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['one_per_minute', 't']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['one_per_minute', 't']]), d([['per_hour', 't']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40), ok(10, 10, 'HOUR', 2800)],
      },
    ],
    keys: { '{p}basic_one_per_minute_t_1699999980': 2, '{p}basic_per_hour_t_1699999200': 0 },
  },
  {
    name: 'quota mode: over-limit quota descriptors fail the request only when all of them are over',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['quota', 'q']]), d([['quota2', 'q']])],
        overall: 'OK',
        statuses: [ok(0, 1, 'HOUR', 2800), ok(0, 1, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['quota', 'q']]), d([['quota2', 'z']])],
        overall: 'OK',
        statuses: [over(1, 'HOUR', 2800), ok(0, 1, 'HOUR', 2800)],
      },
      {
        descriptors: [d([['quota', 'q']]), d([['quota2', 'q']])],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'HOUR', 2800), over(1, 'HOUR', 2800)],
      },
    ],
  },
  {
    name: 'global quota mode',
    config: [limit10],
    env: { QUOTA_MODE: 'true' },
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['k', 'gq']]), d([['shadow', 'gq']])],
        hitsAddend: 11,
        overall: 'OK',
        statuses: [over(10, 'HOUR', 2800), ok(0, 2, 'HOUR', 2800)],
      },
    ],
  },
  {
    name: 'a limit override in the request replaces the configured limit',
    config: [limit10],
    domain: 'ten',
    steps: [
      {
        descriptors: [d([['k', 'o']], { limit: { requestsPerUnit: 1, unit: 'MINUTE' } })],
        overall: 'OK',
        statuses: [ok(0, 1, 'MINUTE', 40)],
      },
      {
        descriptors: [d([['k', 'o']], { limit: { requestsPerUnit: 1, unit: 'MINUTE' } })],
        overall: 'OVER_LIMIT',
        statuses: [over(1, 'MINUTE', 40)],
      },
    ],
    ruleStats: { 'ten.k_o.total_hits': 2, 'ten.k_o.over_limit': 1 },
    keys: { '{p}ten_k_o_1699999980': 2 },
  },
  {
    name: 'an unknown domain answers OK without limits and is counted',
    config: [basic],
    domain: 'nowhere',
    steps: [
      {
        descriptors: [d([['a', 'b']]), d([['c', 'd']])],
        overall: 'OK',
        statuses: [NO_LIMIT, NO_LIMIT],
      },
    ],
    stats: { 'ratelimit.service.rate_limit.nowhere.domain_not_found': 2 },
  },
  {
    name: 'response and request headers describe the descriptor closest to its limit',
    config: [basic],
    env: {
      LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
      LIMIT_REQUEST_HEADERS_ENABLED: 'true',
      LIMIT_REQUEST_REMAINING_HEADER: 'X-Left',
    },
    domain: 'basic',
    steps: [
      {
        descriptors: [d([['per_hour', 'h']]), d([['per_second', 'h']]), d([['free', 'h']])],
        overall: 'OK',
        statuses: [ok(9, 10, 'HOUR', 2800), ok(2, 3, 'SECOND', 1), NO_LIMIT],
        responseHeaders: [
          ['RateLimit-Limit', '3'],
          ['RateLimit-Remaining', '2'],
          ['RateLimit-Reset', '1'],
        ],
        requestHeaders: [
          ['RateLimit-Limit', '3'],
          ['X-Left', '2'],
          ['RateLimit-Reset', '1'],
        ],
      },
      {
        descriptors: [d([['blocked', 'h']]), d([['per_hour', 'h']])],
        overall: 'OVER_LIMIT',
        statuses: [over(0, 'SECOND', 1), ok(8, 10, 'HOUR', 2800)],
        responseHeaders: [
          ['RateLimit-Limit', '0'],
          ['RateLimit-Remaining', '0'],
          ['RateLimit-Reset', '1'],
        ],
        requestHeaders: [
          ['RateLimit-Limit', '0'],
          ['X-Left', '0'],
          ['RateLimit-Reset', '1'],
        ],
      },
    ],
  },
  {
    name: 'per-unit headers give the lowest remaining count of each unit',
    config: [basic],
    env: { LIMIT_PER_UNIT_HEADERS_ENABLED: 'true' },
    domain: 'basic',
    steps: [
      {
        descriptors: [
          d([['per_hour', 'u']]),
          d([['per_hour', 'u']], { hitsAddend: 3 }),
          d([['per_second', 'u']]),
        ],
        overall: 'OK',
        statuses: [ok(9, 10, 'HOUR', 2800), ok(6, 10, 'HOUR', 2800), ok(2, 3, 'SECOND', 1)],
        responseHeaders: [
          ['RateLimit-Limit-Hours', '10'],
          ['RateLimit-Remaining-Hours', '6'],
          ['RateLimit-Limit-Seconds', '3'],
          ['RateLimit-Remaining-Seconds', '2'],
        ],
      },
    ],
  },
  {
    name: 'calendar months: the window is the month in UTC',
    config: [
      `
domain: cal
descriptors:
  - key: m
    rate_limit: { unit: month, requests_per_unit: 2 }
`,
    ],
    env: { USE_CALENDAR_MONTH_RATE_LIMIT: 'true' },
    domain: 'cal',
    steps: [
      // 2023-11-14T22:13:20Z: 15 days 1 hour 46 minutes 40 seconds to December.
      { descriptors: [d([['m', 'x']])], overall: 'OK', statuses: [ok(1, 2, 'MONTH', 1388800)] },
    ],
    keys: { '{p}cal_m_x_1698796800': 1 },
    // The key expires with the month (docs/compat.md, "Windows and reset"), not 30 days later.
    ttls: { '{p}cal_m_x_1698796800': 1388800 },
  },
  {
    name: 'fixed 30-day months by default',
    config: [
      `
domain: cal
descriptors:
  - key: m
    rate_limit: { unit: month, requests_per_unit: 2 }
`,
    ],
    domain: 'cal',
    steps: [
      { descriptors: [d([['m', 'x']])], overall: 'OK', statuses: [ok(1, 2, 'MONTH', 352000)] },
    ],
    keys: { '{p}cal_m_x_1697760000': 1 },
    ttls: { '{p}cal_m_x_1697760000': 2592000 },
  },
  {
    name: 'dynamic metadata carries the request and the metadata of the rules it passed',
    config: [
      `
domain: meta
descriptors:
  - key: a
    metadata: { team: payments, nested: { x: 1 } }
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: b
    metadata: { team: other, nested: { y: 2 } }
    rate_limit: { unit: hour, requests_per_unit: 0 }
`,
    ],
    env: { RESPONSE_DYNAMIC_METADATA: 'true' },
    domain: 'meta',
    steps: [
      {
        descriptors: [d([['a', '1']]), d([['b', '1']], { hitsAddend: 1 })],
        hitsAddend: 1,
        overall: 'OVER_LIMIT',
        statuses: [ok(4, 5, 'HOUR', 2800), over(0, 'HOUR', 2800)],
        dynamicMetadata: {
          domain: 'meta',
          descriptors: [{ entries: ['a=1'] }, { entries: ['b=1'], hitsAddend: 1 }],
          hitsAddend: 1,
          metadata: { team: 'payments', nested: { x: 1 } },
        },
      },
    ],
  },
];
