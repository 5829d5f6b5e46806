// The cardinality cap: runtime statistics keys stop at STATS_MAX_RULE_KEYS.
import { StatsStore } from '../../../src/stats';
import { snapshotOf } from '../../helpers/engine';

it('creates configured keys always, and runtime keys only below the cap', () => {
  const store = new StatsStore({ maxRuleKeys: 3 });
  const a = store.forRule('d.a');
  const b = store.forRule('d.b');
  const x = store.forRuntimeRule('d.a_x', a);
  expect(x.key).toBe('d.a_x');
  expect(store.forRuntimeRule('d.a_y', a)).toBe(a);
  expect(store.forRuntimeRule('d.a_x', a)).toBe(x);
  expect(store.forRule('d.c').key).toBe('d.c');
  expect(store.forRuntimeRule('d.b_z', b)).toBe(b);
  expect(store.snapshot().counters.get('ratelimit.service.rule_stats_dropped')).toBe(2);
  expect(store.ruleKeyCount).toBe(4);
});

it('counts a detailed_metric past the cap under the rule itself', () => {
  const store = new StatsStore({ maxRuleKeys: 2 });
  const snapshot = snapshotOf(
    [
      'domain: d\ndescriptors:\n  - key: user\n    detailed_metric: true\n    rate_limit: { unit: hour, requests_per_unit: 9 }\n',
    ],
    store,
  );
  const q = (value: string) => ({ entries: [{ key: 'user', value }], limit: undefined });
  expect(snapshot.findLimit('d', q('u1'))?.stats.key).toBe('d.user_u1');
  expect(snapshot.findLimit('d', q('u2'))?.stats.key).toBe('d.user');
  expect(snapshot.findLimit('d', q('u1'))?.stats.key).toBe('d.user_u1');
});

it('caps counters named after unknown domains', () => {
  const store = new StatsStore({ maxRuleKeys: 1 });
  store.runtimeCounter('ratelimit.service.rate_limit.x.domain_not_found').inc();
  store.runtimeCounter('ratelimit.service.rate_limit.y.domain_not_found').inc();
  store.runtimeCounter('ratelimit.service.rate_limit.x.domain_not_found').inc();
  const counters = store.snapshot().counters;
  expect(counters.get('ratelimit.service.rate_limit.x.domain_not_found')).toBe(2);
  expect(counters.has('ratelimit.service.rate_limit.y.domain_not_found')).toBe(false);
  expect(counters.get('ratelimit.service.rule_stats_dropped')).toBe(1);
});

it('costs nothing when statistics are off', () => {
  const store = new StatsStore({ isEnabled: false });
  store.timer('t').record(5);
  store.forRuntimeRule('d.k_v', undefined).totalHits.add(3);
  expect(store.snapshot().counters.size).toBe(0);
  expect([...store.allTimers()]).toHaveLength(0);
});

describe('bytes of keys built from request values (STATS_MAX_RUNTIME_KEY_BYTES)', () => {
  it('refuses a new runtime key once their bytes would pass the cap', () => {
    const store = new StatsStore({ maxRuleKeys: 1000, maxRuntimeKeyBytes: 100 });
    const rule = store.forRule('d.k');
    const long = `d.k_${'x'.repeat(60)}`;
    expect(store.forRuntimeRule(long, rule).key).toBe(long);
    // 64 bytes held; another 64 would pass 100.
    expect(store.forRuntimeRule(`d.k_${'y'.repeat(60)}`, rule)).toBe(rule);
    expect(store.forRuntimeRule('d.k_short', rule).key).toBe('d.k_short');
    expect(store.runtimeKeyBytes).toBe(64 + 9);
    expect(store.snapshot().counters.get('ratelimit.service.rule_stats_dropped')).toBe(1);
  });

  it('counts bytes, not characters', () => {
    const store = new StatsStore({ maxRuntimeKeyBytes: 10 });
    // Five characters, eleven bytes.
    expect(store.forRuntimeRule('日本語!!', undefined).key).toBe('');
  });
});

describe('release of idle runtime keys', () => {
  it('frees a runtime key idle for the given number of checks, and the room it held', () => {
    const store = new StatsStore({ maxRuleKeys: 3, maxRuntimeKeyBytes: 1000 });
    const rule = store.forRule('d.k');
    const busy = store.forRuntimeRule('d.k_busy', rule);
    const unknown = store.runtimeCounter('ratelimit.service.rate_limit.zz.domain_not_found');
    unknown.inc();
    busy.totalHits.inc();
    expect(store.releaseIdle(2)).toEqual([]);
    busy.totalHits.inc();
    expect(store.releaseIdle(2)).toEqual([]);
    // The unknown domain's counter sat still for two checks; the busy key moved.
    expect(store.releaseIdle(2)).toEqual(['ratelimit.service.rate_limit.zz.domain_not_found']);
    expect(store.snapshot().counters.has('ratelimit.service.rate_limit.zz.domain_not_found')).toBe(
      false,
    );
    const released = store.releaseIdle(2);
    expect(released).toContain('ratelimit.service.rate_limit.d.k_busy.total_hits');
    expect(released).toHaveLength(7);
    expect(store.runtimeKeyBytes).toBe(0);
    expect(store.forRuntimeRule('d.k_new', rule).key).toBe('d.k_new');
  });

  it('never releases a configured rule', () => {
    const store = new StatsStore();
    store.forRule('d.k');
    for (let i = 0; i < 5; i++) expect(store.releaseIdle(1)).toEqual([]);
    expect(store.ruleKeyCount).toBe(1);
  });
});

it('leaves no rule statistics behind for a refused configuration', () => {
  const store = new StatsStore();
  expect(() =>
    snapshotOf(
      [
        'domain: refused\ndescriptors:\n  - key: good\n    rate_limit: { unit: hour, requests_per_unit: 9 }\n  - key: bad\n    rate_limit: { unit: fortnight, requests_per_unit: 9 }\n',
      ],
      store,
    ),
  ).toThrow();
  expect(store.ruleKeyCount).toBe(0);
  expect([...store.snapshot().counters.keys()].filter((n) => n.includes('refused'))).toEqual([]);
});
