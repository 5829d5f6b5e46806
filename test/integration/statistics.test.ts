// Statistics of the running server as collectors receive them: statsd and DogStatsD datagrams
// (and TCP lines), Prometheus scrapes with the built-in mapping and a mapping file, and the
// cardinality cap.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { parseExposition } from '../helpers/prometheus';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { StatsdCapture } from '../helpers/statsd-capture';
import { grpcTransport, req, type Request, type Transport } from '../helpers/transports';

const CONFIG = {
  'stats.yaml': `
domain: stats
descriptors:
  - key: within
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: split
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: refund
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: user
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: route
    value_to_metric: true
    descriptors:
      - key: method
        rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: host.name
    rate_limit: { unit: hour, requests_per_unit: 10 }
`,
  'other.yaml': `
domain: other
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: a
    descriptors:
      - key: b
        rate_limit: { unit: hour, requests_per_unit: 10 }
        descriptors:
          - key: c
            rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: user
    detailed_metric: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
`,
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();
const run = `${process.pid}${Date.now() % 100000}`;

async function start(
  env: Record<string, string>,
): Promise<{ service: ServiceProcess; rls: Transport }> {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', STATS_FLUSH_INTERVAL: '50ms', ...env },
  });
  cleanup(() => service.stop());
  const rls = grpcTransport(service.ports.grpc);
  cleanup(() => {
    rls.close();
  });
  return { service, rls };
}

async function capture(kind: 'udp' | 'tcp'): Promise<StatsdCapture> {
  const c = kind === 'udp' ? await StatsdCapture.udp() : await StatsdCapture.tcp();
  cleanup(() => c.close());
  return c;
}

/** Counter totals received after `from`, for names under `prefix`, once they stop changing. */
async function settled(
  c: StatsdCapture,
  from: number,
  prefix: string,
  expected: Map<string, number>,
): Promise<Map<string, number>> {
  const pick = (): Map<string, number> =>
    new Map(
      [...c.counters(from)]
        .filter(([name]) => name.startsWith(prefix))
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  await eventually(
    () =>
      JSON.stringify([...pick()]) ===
      JSON.stringify([...expected].sort(([a], [b]) => (a < b ? -1 : 1))),
    {
      what: `${prefix}* to reach the expected totals`,
      timeoutMs: 5000,
    },
  ).catch(() => undefined);
  return pick();
}

describe('statsd', () => {
  let statsd: StatsdCapture;
  let rls: Transport;

  beforeAll(async () => {
    statsd = await capture('udp');
    ({ rls } = await start({
      USE_STATSD: 'true',
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(statsd.port),
      SANITIZE_DESCRIPTOR_METRIC_DOTS: 'true',
    }));
  });

  const expectCounters = async (
    prefix: string,
    requests: Request[],
    expected: Record<string, number>,
  ): Promise<void> => {
    const from = statsd.lines.length;
    for (const r of requests) await rls.send(r);
    const want = new Map(
      Object.entries(expected).map(([k, v]) => [`ratelimit.service.rate_limit.${prefix}${k}`, v]),
    );
    expect(await settled(statsd, from, `ratelimit.service.rate_limit.${prefix}`, want)).toEqual(
      want,
    );
  };

  it('counts a hit within the limit', async () => {
    await expectCounters('stats.within.', [req('stats', [[['within', run]]])], {
      total_hits: 1,
      within_limit: 1,
    });
  });

  it('splits hits across near, over and within limit', async () => {
    const value = `split${run}`;
    await expectCounters(
      'stats.split.',
      [4, 5, 3, 2].map((hits) => req('stats', [[['split', value]]], hits)),
      { total_hits: 14, near_limit: 2, over_limit: 4, within_limit: 9 },
    );
  });

  it('counts what shadow mode let through', async () => {
    await expectCounters('stats.shadow.', [req('stats', [[['shadow', run]]], 3)], {
      total_hits: 3,
      near_limit: 1,
      over_limit: 2,
      shadow_mode: 2,
    });
  });

  it('counts negative hits apart', async () => {
    await expectCounters(
      'stats.refund.',
      [
        req('stats', [[['refund', run]]], 5),
        {
          domain: 'stats',
          descriptors: [{ entries: [['refund', run]], hitsAddend: 2, isNegativeHits: true }],
        },
      ],
      { total_hits: 5, within_limit: 5, total_negative_hits: 2 },
    );
  });

  it('names detailed_metric and value_to_metric statistics by the runtime values', async () => {
    await expectCounters('stats.user_', [req('stats', [[['user', `alice${run}`]]])], {
      [`alice${run}.total_hits`]: 1,
      [`alice${run}.within_limit`]: 1,
    });
    await expectCounters(
      'stats.route_',
      [
        req('stats', [
          [
            ['route', 'api'],
            ['method', 'GET'],
          ],
        ]),
      ],
      {
        'api.method.total_hits': 1,
        'api.method.within_limit': 1,
      },
    );
  });

  it('replaces the dots of keys and values with SANITIZE_DESCRIPTOR_METRIC_DOTS', async () => {
    await expectCounters('stats.host_name.', [req('stats', [[['host.name', 'api.example.com']]])], {
      total_hits: 1,
      within_limit: 1,
    });
  });

  it('sends the service statistics and the response time', async () => {
    await eventually(() => statsd.lines.includes('ratelimit.service.config_load_success:1|c'), {
      what: 'config_load_success',
    });
    await eventually(
      () =>
        statsd.lines.some((l) =>
          /^ratelimit_server\.ShouldRateLimit\.response_time:[\d.]+\|ms$/.test(l),
        ),
      { what: 'a timer' },
    );
    expect(
      statsd.counters().get('ratelimit_server.ShouldRateLimit.total_requests'),
    ).toBeGreaterThanOrEqual(9);
  });
});

describe('statsd with EXTRA_TAGS, over TCP', () => {
  it('encodes the tags into every name as the reference does', async () => {
    const statsd = await capture('tcp');
    const { rls } = await start({
      USE_STATSD: 'true',
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(statsd.port),
      STATSD_PROTOCOL: 'tcp',
      EXTRA_TAGS: 'team:a.b,env:prod',
    });
    await rls.send(req('other', [[['k', run]]]));
    await eventually(
      () =>
        statsd.lines.includes(
          'ratelimit.service.rate_limit.other.k.total_hits.__env=prod.__team=a_b:1|c',
        ),
      {
        what: 'the tagged line',
      },
    );
    expect(statsd.lines).toContain(
      'ratelimit.service.config_load_success.__env=prod.__team=a_b:1|c',
    );
  });
});

describe('DogStatsD', () => {
  it('mogrifies names into a name and tags, with EXTRA_TAGS first', async () => {
    const dog = await capture('udp');
    const { rls } = await start({
      USE_DOG_STATSD: 'true',
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(dog.port),
      EXTRA_TAGS: 'env:prod',
      DOG_STATSD_MOGRIFIERS: 'RULE',
      DOG_STATSD_MOGRIFIER_RULE_PATTERN: String.raw`^ratelimit\.service\.rate_limit\.([^.]+)\.(.+)\.([^.]+)$`,
      DOG_STATSD_MOGRIFIER_RULE_NAME: 'ratelimit.service.rate_limit.$3',
      DOG_STATSD_MOGRIFIER_RULE_TAGS: 'domain:$1,descriptor:$2',
    });
    await rls.send(
      req(
        'other',
        [
          [
            ['a', '1'],
            ['b', '2'],
          ],
        ],
        2,
      ),
    );
    await eventually(
      () =>
        dog.lines.includes(
          'ratelimit.service.rate_limit.total_hits:2|c|#env:prod,domain:other,descriptor:a.b',
        ),
      {
        what: 'the mogrified line',
      },
    );
    expect(dog.lines).toContain(
      'ratelimit.service.rate_limit.within_limit:2|c|#env:prod,domain:other,descriptor:a.b',
    );
    expect(dog.lines).toContain('ratelimit.service.config_load_success:1|c|#env:prod');
  });
});

describe('Prometheus', () => {
  async function scrape(port: number, pathName = '/metrics'): Promise<Map<string, number>> {
    const res = await fetch(`http://127.0.0.1:${port}${pathName}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  }

  it('maps names and labels with the built-in mapping, and exposes process metrics', async () => {
    const { service, rls } = await start({
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
      EXTRA_TAGS: 'env:prod',
    });
    const port = service.ports.metrics;
    await rls.send(req('other', [[['k', run]]], 3));
    await rls.send(
      req('other', [
        [
          ['a', '1'],
          ['b', '2'],
        ],
      ]),
    );
    await rls.send(
      req('other', [
        [
          ['a', '1'],
          ['b', '2'],
          ['c', '3'],
        ],
      ]),
    );
    await rls.send(req('other', [[['user', 'bob']]]));
    expect((await rls.failure(req('', [[['k', 'v']]]))).status).toBe('INVALID_ARGUMENT');
    const metrics = await scrape(port);
    expect(
      metrics.get('ratelimit_service_rate_limit_total_hits{domain="other",env="prod",key1="k"}'),
    ).toBe(3);
    expect(
      metrics.get('ratelimit_service_rate_limit_within_limit{domain="other",env="prod",key1="k"}'),
    ).toBe(3);
    // Two and three levels below the domain both become key1 and key2; deeper levels fold in.
    expect(
      metrics.get(
        'ratelimit_service_rate_limit_total_hits{domain="other",env="prod",key1="a",key2="b"}',
      ),
    ).toBe(2);
    expect(
      metrics.get(
        'ratelimit_service_rate_limit_total_hits{domain="other",env="prod",key1="user_bob"}',
      ),
    ).toBe(1);
    expect(
      metrics.get('ratelimit_service_should_rate_limit_error{env="prod",err_type="service_error"}'),
    ).toBe(1);
    expect(
      metrics.get('ratelimit_service_total_requests{env="prod",grpc_method="ShouldRateLimit"}'),
    ).toBe(5);
    expect(
      metrics.get(
        'ratelimit_service_response_time_seconds_count{env="prod",grpc_method="ShouldRateLimit"}',
      ),
    ).toBe(5);
    expect(
      metrics.get(
        'ratelimit_service_response_time_seconds_bucket{env="prod",grpc_method="ShouldRateLimit",le="10"}',
      ),
    ).toBe(5);
    expect(metrics.get('ratelimit_service_config_load_success{env="prod"}')).toBe(1);
    expect([...metrics.keys()].some((k) => k.startsWith('process_cpu_user_seconds_total'))).toBe(
      true,
    );
    expect([...metrics.keys()].some((k) => k.startsWith('nodejs_heap_size_total_bytes'))).toBe(
      true,
    );
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
  });

  it('uses PROMETHEUS_MAPPER_YAML, in milliseconds when asked, with unmapped names escaped', async () => {
    const file = path.join(runtime.base, 'mapper.yaml');
    writeFileSync(
      file,
      `mappings:
  - match: "ratelimit.service.rate_limit.*.*.*"
    name: "rl_\${3}"
    labels: { domain: "$1", rule: "$2" }
  - match: "ratelimit_server.*.response_time"
    name: "rl_response_ms"
    timer_type: histogram
    histogram_options: { buckets: [1000, 10000] }
    labels: { method: "$1" }
  - match: 'ratelimit\\.service\\.config_load_(.*)'
    match_type: regex
    name: "rl_config_load"
    labels: { outcome: "$1" }
  - match: "ratelimit.service.call.should_rate_limit.*"
    action: drop
    name: dropped
`,
    );
    const { service, rls } = await start({
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
      PROMETHEUS_PATH: '/custom',
      PROMETHEUS_MAPPER_YAML: file,
    });
    const port = service.ports.metrics;
    await rls.send(req('other', [[['k', run]]]));
    await rls.send(
      req('other', [
        [
          ['a', '1'],
          ['b', '2'],
        ],
      ]),
    );
    await rls.failure(req('', [[['k', 'v']]]));
    const metrics = await scrape(port, '/custom');
    expect(metrics.get('rl_total_hits{domain="other",rule="k"}')).toBe(1);
    expect(metrics.get('rl_within_limit{domain="other",rule="k"}')).toBe(1);
    expect(metrics.get('rl_config_load{outcome="success"}')).toBe(1);
    expect(metrics.get('rl_response_ms_bucket{le="1000",method="ShouldRateLimit"}')).toBe(3);
    expect(metrics.get('ratelimit_service_rate_limit_other_a_b_total_hits')).toBe(1);
    expect(
      [...metrics.keys()].some((k) => k.includes('should_rate_limit') || k.startsWith('dropped')),
    ).toBe(false);
  });

  // envoyproxy/ratelimit src/stats/prom/prometheus_sink.go, NewPrometheusSink: the error of
  // mapper.InitFromFile is dropped, and statsd_exporter's MetricMapper.InitFromFile returns before
  // keeping any rule when the file cannot be read, so the reference starts and exports every
  // statistic under its escaped name. Envoy Gateway mounts the mapping as an optional ConfigMap.
  it('starts without a mapping file that does not exist, warning with its name, names escaped', async () => {
    const file = path.join(runtime.base, 'no-such-mapper.yaml');
    const { service, rls } = await start({
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
      PROMETHEUS_MAPPER_YAML: file,
    });
    await service.logged(file);
    const warning = service.logs
      .split('\n')
      .find((line) => line.includes('PROMETHEUS_MAPPER_YAML') && line.includes(file));
    expect(warning).toMatch(/warn/);
    await rls.send(req('other', [[['k', run]]]));
    const metrics = await scrape(service.ports.metrics, '/metrics');
    // The built-in mapping would have made domain and rule labels of this name.
    expect(metrics.get('ratelimit_service_rate_limit_other_k_total_hits')).toBe(1);
  });

  it('refuses a bad mapping file at start-up, naming the setting and the problem', async () => {
    const file = path.join(runtime.base, 'bad-mapper.yaml');
    writeFileSync(
      file,
      'mappings:\n  - match: "a.b"\n    name: "x"\n    labels: { "1bad": "$1" }\n',
    );
    const service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        BACKEND_TYPE: 'memory',
        USE_PROMETHEUS: 'true',
        PROMETHEUS_ADDR: '127.0.0.1:0',
        PROMETHEUS_MAPPER_YAML: file,
      },
      waitFor: 'nothing',
    });
    cleanup(() => service.stop());
    expect(await service.waitForExit()).toBe(1);
    expect(service.logs).toContain(
      `ratelimit: invalid settings:\n  PROMETHEUS_MAPPER_YAML: ${file}: mapping 1: invalid label key: 1bad\n`,
    );
  });
});

describe('the cardinality cap', () => {
  it('stops making keys at STATS_MAX_RULE_KEYS, counts into the rule itself, and counts what it dropped', async () => {
    const { service, rls } = await start({ USE_STATSD: 'false', STATS_MAX_RULE_KEYS: '13' });
    // The configuration holds 11 rule keys; room for 2 runtime ones.
    for (const user of ['u1', 'u2', 'u3', 'u4']) await rls.send(req('other', [[['user', user]]]));
    await rls.send(req('nowhere', [[['k', 'v']]]));
    expect(await service.stat('ratelimit.service.rate_limit.other.user_u1.total_hits')).toBe(1);
    expect(await service.stat('ratelimit.service.rate_limit.other.user_u2.total_hits')).toBe(1);
    const stats = await (await fetch(service.debugUrl('/stats'))).text();
    expect(stats).not.toContain('user_u3');
    expect(stats).not.toContain('nowhere.domain_not_found');
    expect(await service.stat('ratelimit.service.rate_limit.other.user.total_hits')).toBe(2);
    expect(await service.stat('ratelimit.service.rule_stats_dropped')).toBe(3);
  });
});
