// The Prometheus sink: mapped names and labels, label sets that grow, timers observed directly.
import { MemoryLogger } from '../../../src/lib/logger';
import { defaultMapping, MetricMapper, PrometheusSink, StatsStore } from '../../../src/stats';
import { parseExposition } from '../../helpers/prometheus';

function sink(
  extraTags: Record<string, string> = {},
  yaml = defaultMapping(false),
): { sink: PrometheusSink; store: StatsStore; logger: MemoryLogger } {
  const store = new StatsStore();
  const logger = new MemoryLogger();
  return {
    sink: new PrometheusSink({
      mapper: MetricMapper.fromYaml(yaml, 'test'),
      store,
      extraTags,
      logger,
    }),
    store,
    logger,
  };
}

async function samples(s: PrometheusSink): Promise<Map<string, number>> {
  return parseExposition((await s.render()).body);
}

it('maps two- and three-segment rule statistics into one metric with growing labels', async () => {
  const { sink: s } = sink({ env: 'prod' });
  s.counter('ratelimit.service.rate_limit.d.k.total_hits', 3);
  s.counter('ratelimit.service.rate_limit.d.a.b.total_hits', 1);
  s.counter('ratelimit.service.rate_limit.d.a.b.c.total_hits', 1);
  s.counter('ratelimit.service.rate_limit.d.k.total_hits', 2);
  const m = await samples(s);
  expect(m.get('ratelimit_service_rate_limit_total_hits{domain="d",env="prod",key1="k"}')).toBe(5);
  expect(
    m.get('ratelimit_service_rate_limit_total_hits{domain="d",env="prod",key1="a",key2="b"}'),
  ).toBe(2);
});

it('exports unmapped names escaped, and drops what a mapping drops', async () => {
  const { sink: s } = sink({}, 'mappings:\n  - match: "a.*"\n    action: drop\n    name: x\n');
  s.counter('a.b', 1);
  s.counter('ratelimit.service.rate_limit.d.k.over_limit_with_local_cache', 4);
  s.gauge('some-gauge.value', 7);
  const m = await samples(s);
  expect(m.get('ratelimit_service_rate_limit_d_k_over_limit_with_local_cache')).toBe(4);
  expect(m.get('some_gauge_value')).toBe(7);
  expect([...m.keys()].some((k) => k.startsWith('a_b') || k.startsWith('x'))).toBe(false);
});

it('observes timers sample by sample, scaled, into the mapped histogram', async () => {
  const { sink: s, store } = sink();
  const timer = store.timer('ratelimit_server.ShouldRateLimit.response_time');
  for (const ms of [2, 40, 3000]) timer.record(ms);
  s.timing();
  const m = await samples(s);
  expect(
    m.get('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"}'),
  ).toBe(3);
  expect(
    m.get(
      'ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="0.005"}',
    ),
  ).toBe(1);
  expect(
    m.get(
      'ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="0.05"}',
    ),
  ).toBe(2);
  expect(
    m.get('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"}'),
  ).toBeCloseTo(3.042);
});

it('keeps milliseconds with PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS', async () => {
  const { sink: s, store } = sink({}, defaultMapping(true));
  store.timer('ratelimit_server.ShouldRateLimit.response_time').record(40);
  const m = await samples(s);
  expect(m.get('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"}')).toBe(
    40,
  );
});

it('drops a statistic whose metric exists with another type, once logged', async () => {
  const { sink: s, logger } = sink(
    {},
    'mappings:\n  - match: "c.*"\n    name: same\n  - match: "g.*"\n    name: same\n',
  );
  s.counter('c.one', 1);
  s.gauge('g.one', 5);
  s.gauge('g.two', 6);
  const m = await samples(s);
  expect(m.get('same')).toBe(1);
  expect(logger.lines.filter((l) => l.message.includes('exists with another type'))).toHaveLength(
    1,
  );
});
