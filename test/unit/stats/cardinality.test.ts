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
