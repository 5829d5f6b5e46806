// statsd_exporter's mapping format as the Prometheus sink reads it.
import { defaultMapping, escapeMetricName, MetricMapper } from '../../../src/stats';

const builtIn = MetricMapper.fromYaml(defaultMapping(false), 'built-in');

describe('the built-in mapping', () => {
  it.each([
    [
      'ratelimit.service.rate_limit.d.k.total_hits',
      'counter',
      'ratelimit_service_rate_limit_total_hits',
      { domain: 'd', key1: 'k' },
    ],
    [
      'ratelimit.service.rate_limit.d.k_v.near_limit',
      'counter',
      'ratelimit_service_rate_limit_near_limit',
      { domain: 'd', key1: 'k_v' },
    ],
    [
      'ratelimit.service.rate_limit.d.a.b.over_limit',
      'counter',
      'ratelimit_service_rate_limit_over_limit',
      { domain: 'd', key1: 'a', key2: 'b' },
    ],
    [
      'ratelimit.service.rate_limit.d.a.b.c.d.within_limit',
      'counter',
      'ratelimit_service_rate_limit_within_limit',
      { domain: 'd', key1: 'a', key2: 'b' },
    ],
    [
      'ratelimit.service.rate_limit.d.a.b.shadow_mode',
      'counter',
      'ratelimit_service_rate_limit_shadow_mode',
      { domain: 'd', key1: 'a', key2: 'b' },
    ],
    [
      'ratelimit.service.call.should_rate_limit.redis_error',
      'counter',
      'ratelimit_service_should_rate_limit_error',
      { err_type: 'redis_error' },
    ],
    [
      'ratelimit_server.ShouldRateLimit.total_requests',
      'counter',
      'ratelimit_service_total_requests',
      { grpc_method: 'ShouldRateLimit' },
    ],
    [
      'ratelimit_server.ShouldRateLimit.response_time',
      'observer',
      'ratelimit_service_response_time_seconds',
      { grpc_method: 'ShouldRateLimit' },
    ],
    [
      'ratelimit.service.config_load_success',
      'counter',
      'ratelimit_service_config_load_success',
      {},
    ],
    ['ratelimit.service.config_load_error', 'counter', 'ratelimit_service_config_load_error', {}],
  ] as const)('%s', (name, type, metric, labels) => {
    const mapped = builtIn.map(name, type);
    expect({ name: mapped.name, labels: mapped.labels }).toEqual({ name: metric, labels });
  });

  it('leaves two-level local-cache statistics unmapped, escaped, as statsd_exporter does', () => {
    expect(
      builtIn.map('ratelimit.service.rate_limit.d.k.over_limit_with_local_cache', 'counter'),
    ).toEqual({
      rule: undefined,
      name: 'ratelimit_service_rate_limit_d_k_over_limit_with_local_cache',
      labels: {},
      isDropped: false,
    });
  });

  it('folds three-level local-cache statistics into over_limit, as the unanchored regex of the reference does', () => {
    expect(
      builtIn.map('ratelimit.service.rate_limit.d.a.b.over_limit_with_local_cache', 'counter').name,
    ).toBe('ratelimit_service_rate_limit_over_limit');
  });

  it('scales the response time to seconds unless asked to keep milliseconds', () => {
    expect(
      builtIn.map('ratelimit_server.ShouldRateLimit.response_time', 'observer').rule?.scale,
    ).toBe(0.001);
    expect(
      MetricMapper.fromYaml(defaultMapping(true), 't').map(
        'ratelimit_server.X.response_time',
        'observer',
      ).rule?.scale,
    ).toBeUndefined();
    expect(
      builtIn.map('ratelimit_server.ShouldRateLimit.response_time', 'observer').rule?.observerType,
    ).toBe('histogram');
  });

  it('applies match_metric_type', () => {
    expect(builtIn.map('ratelimit.service.config_load_success', 'gauge').rule).toBeUndefined();
  });
});

describe('a mapping file', () => {
  const mapper = MetricMapper.fromYaml(
    `defaults:
  observer_type: histogram
  histogram_options: { buckets: [1, 2] }
mappings:
  - match: "app.*.*"
    name: "app_\${2}_total"
    help: "Requests by app."
    labels: { app: "$1" }
  - match: "app.special.hits"
    name: "never_reached"
  - match: '^web\\.(?P<route>[a-z]+)\\.latency$'
    match_type: regex
    name: "web_latency"
    labels: { route: "$1" }
  - match: "noise.*"
    action: drop
    name: x
  - match: "t.*"
    name: "t_ms"
    observer_type: summary
    summary_options: { quantiles: [{ quantile: 0.5, error: 0.05 }] }
`,
    'mapper.yaml',
  );

  it('applies glob mappings in file order, with captures in names and labels', () => {
    expect(mapper.map('app.checkout.requests', 'counter')).toMatchObject({
      name: 'app_requests_total',
      labels: { app: 'checkout' },
    });
    expect(mapper.map('app.special.hits', 'counter').name).toBe('app_hits_total');
    expect(mapper.map('app.checkout.requests', 'counter').rule?.help).toBe('Requests by app.');
  });

  it('reads Go named groups in regex mappings', () => {
    expect(mapper.map('web.home.latency', 'observer')).toMatchObject({
      name: 'web_latency',
      labels: { route: 'home' },
    });
    expect(mapper.map('web.home.latency', 'observer').rule?.buckets).toEqual([1, 2]);
  });

  it('drops and defaults', () => {
    expect(mapper.map('noise.x', 'counter').isDropped).toBe(true);
    expect(mapper.map('t.x', 'observer').rule).toMatchObject({
      observerType: 'summary',
      quantiles: [0.5],
    });
  });
});

describe('regex mappings, with Go semantics', () => {
  /** A braced template reference, `${name}`, which a template literal would interpolate. */
  const braced = (name: string): string => '${' + name + '}';
  const mapper = MetricMapper.fromYaml(
    String.raw`mappings:
  - match: '(?i)^ratelimit\.service\.rate_limit\.(?P<domain>[^.]+)\.(?P<rest>.+)\.(?P<stat>[[:alpha:]_]+)$'
    match_type: regex
    name: "ratelimit_$3"
    labels: { domain: "$domain", descriptor: "${braced('rest')}", stat: "$stat", none: "$nope" }
  - match: '^code\.([[:digit:]]+)$'
    match_type: regex
    name: "code"
    labels: { code: "${braced('1')}" }
`,
    'go.yaml',
  );

  it('reads (?i), and expands $name and ${name} in labels as Go does', () => {
    expect(
      mapper.map('RateLimit.Service.Rate_Limit.api.path_x.total_hits', 'counter'),
    ).toMatchObject({
      name: 'ratelimit_total_hits',
      labels: { domain: 'api', descriptor: 'path_x', stat: 'total_hits', none: '' },
    });
  });

  it('reads a POSIX class as a class', () => {
    expect(mapper.map('code.429', 'counter')).toMatchObject({
      name: 'code',
      labels: { code: '429' },
    });
    expect(mapper.map('code.d]', 'counter').rule).toBeUndefined();
  });

  it.each([
    [
      "'(?=x)'",
      /^f\.yaml: mapping 1: invalid regex \(\?=x\): error parsing regexp: invalid or unsupported Perl syntax: `\(\?=`$/,
    ],
    [
      `'(a)'\n    labels: { cost: "$$1" }`,
      /^f\.yaml: mapping 1: label cost: "\$\$1" holds a literal \$ \(Go keeps it as text\); this service reads every \$ as a group reference$/,
    ],
  ])('refuses %s at load', (match, message) => {
    const text = `mappings:\n  - match: ${match}\n    match_type: regex\n    name: x\n`;
    expect(() => MetricMapper.fromYaml(text, 'f.yaml')).toThrow(message);
  });
});

describe('refusals', () => {
  it.each([
    ['mappings: [', /^f\.yaml: the YAML does not parse: /],
    ['nope: 1', /^f\.yaml: unknown key 'nope'; accepted: mappings, defaults$/],
    [
      'mappings:\n  - match: "a.b"\n',
      /^f\.yaml: mapping 1: metric mapping didn't set a metric name$/,
    ],
    ['mappings:\n  - match: "a..b"\n    name: x\n', /^f\.yaml: mapping 1: invalid match: a\.\.b$/],
    [
      'mappings:\n  - match: "a.b"\n    name: "1x"\n',
      /^f\.yaml: mapping 1: metric name '1x' is not valid$/,
    ],
    [
      'mappings:\n  - match: "a.b"\n    name: x\n    labels: { "-": "1" }\n',
      /^f\.yaml: mapping 1: invalid label key: -$/,
    ],
    [
      'mappings:\n  - match: "("\n    match_type: regex\n    name: x\n',
      /^f\.yaml: mapping 1: invalid regex \(: /,
    ],
    [
      'mappings:\n  - match: "a.b"\n    name: x\n    ttl: 1m\n',
      /^f\.yaml: mapping 1: unknown key 'ttl'$/,
    ],
    [
      'mappings:\n  - match: "a.b"\n    name: x\n    observer_type: gauge\n',
      /^f\.yaml: unknown observer_type "gauge"; accepted: histogram, summary$/,
    ],
  ])('%j', (text, message) => {
    expect(() => MetricMapper.fromYaml(text, 'f.yaml')).toThrow(message);
  });
});

it.each([
  ['ratelimit.service.rate_limit.d.k.total_hits', 'ratelimit_service_rate_limit_d_k_total_hits'],
  ['1abc', '_1abc'],
  ['a-b--c', 'a_b_c'],
  ['path_/api/*', 'path__api__'],
])('escapes %s as %s', (name, escaped) => {
  expect(escapeMetricName(name)).toBe(escaped);
});
