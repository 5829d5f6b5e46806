// ratelimit_build_info: a gauge of 1 tagged with the version, as each sink writes a tagged gauge.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { AggregatorRegistry } from 'prom-client';
import { silentLogger } from '../../../src/lib/logger';
import { SERVICE_VERSION } from '../../../src/lib/version';
import { loadSettings } from '../../../src/settings';
import {
  DogStatsdSink,
  defaultMapping,
  MetricMapper,
  PrometheusSink,
  reportBuildInfo,
  startStatistics,
  StatsFlusher,
  StatsStore,
  StdoutSink,
  type StatsSink,
} from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { parseExposition } from '../../helpers/prometheus';
import { StatsdCapture } from '../../helpers/statsd-capture';

const packageJson = path.resolve(__dirname, '..', '..', '..', 'package.json');
const packageVersion = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string })
  .version;

/** Records every gauge the flusher hands it. */
function recordingSink(): StatsSink & { gauges: [string, number, unknown][] } {
  const gauges: [string, number, unknown][] = [];
  return {
    gauges,
    counter: () => undefined,
    gauge: (name, value, tags) => gauges.push([name, value, tags]),
    timing: () => undefined,
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

function prometheusSink(store: StatsStore): PrometheusSink {
  return new PrometheusSink({
    mapper: MetricMapper.fromYaml(defaultMapping(false), 'built-in'),
    store,
    logger: silentLogger,
  });
}

it('takes the version from package.json', () => {
  expect(SERVICE_VERSION).toBe(packageVersion);
});

it('is reported by every service with statistics on, and not with DISABLE_STATS', async () => {
  const on = recordingSink();
  const settings = loadSettings({ USE_STATSD: 'false' }).stats;
  await startStatistics(settings, { logger: silentLogger, sinkOverride: on }).close();
  expect(on.gauges).toContainEqual(['ratelimit.build_info', 1, { version: packageVersion }]);

  const off = recordingSink();
  const disabled = loadSettings({ DISABLE_STATS: 'true' }).stats;
  const statistics = startStatistics(disabled, { logger: silentLogger, sinkOverride: off });
  await statistics.close();
  expect(off.gauges).toEqual([]);
  expect(statistics.store.snapshot().gauges.size).toBe(0);
});

it('is ratelimit_build_info{version} 1 in Prometheus, and still 1 summed over workers', async () => {
  const registries = await Promise.all(
    [0, 1].map(async () => {
      const store = new StatsStore();
      const sink = prometheusSink(store);
      reportBuildInfo(store, '1.2.3-rc.1');
      await new StatsFlusher(store, [sink], silentLogger).flush();
      return sink.registry.getMetricsAsJSON();
    }),
  );
  const summed = await AggregatorRegistry.aggregate(registries).metrics();
  expect(parseExposition(summed).get('ratelimit_build_info{version="1.2.3-rc.1"}')).toBe(1);
});

it('carries the version in the name for statsd, and as a tag for DogStatsD', async () => {
  const store = new StatsStore();
  reportBuildInfo(store, '1.2.3');
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const capture = await StatsdCapture.udp();
  try {
    const dogstatsd = new DogStatsdSink({
      host: '127.0.0.1',
      port: capture.port,
      protocol: 'udp',
      extraTags: { env: 'prod' },
      mogrifiers: [],
      onError: (err) => {
        throw err;
      },
    });
    const sinks = [new StdoutSink(out, { zone: 'a' }), dogstatsd];
    await new StatsFlusher(store, sinks, silentLogger).close();
    expect(text).toContain('ratelimit.build_info.__version=1_2_3.__zone=a:1|g\n');
    await eventually(() => capture.lines.length > 0, { what: 'the DogStatsD line' });
    expect(capture.lines).toContain('ratelimit.build_info:1|g|#env:prod,version:1.2.3');
  } finally {
    await capture.close();
  }
});
