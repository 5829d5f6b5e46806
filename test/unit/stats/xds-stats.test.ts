// The xDS client's status as statistics: their names in /stats and statsd, their Prometheus
// names, and one series per version gauge however many versions go by.
import { silentLogger } from '../../../src/lib/logger';
import { ManualClock } from '../../../src/lib/clock';
import {
  defaultMapping,
  MetricMapper,
  PrometheusSink,
  StatsFlusher,
  StatsStore,
  XdsStatistics,
  type XdsStatus,
} from '../../../src/stats';
import { parseExposition } from '../../helpers/prometheus';

function status(change: Partial<XdsStatus>): XdsStatus {
  return {
    server: '127.0.0.1:1',
    isConnected: true,
    acks: 0,
    nacks: 0,
    lastAck: undefined,
    lastNack: undefined,
    ...change,
  };
}

function rig() {
  const clock = new ManualClock(1_000_000);
  const store = new StatsStore();
  const sink = new PrometheusSink({
    mapper: MetricMapper.fromYaml(defaultMapping(false), 'built-in'),
    store,
    logger: silentLogger,
  });
  const flusher = new StatsFlusher(store, [sink], silentLogger);
  const xds = new XdsStatistics(store, () => clock.nowMs());
  const scrape = async (): Promise<Map<string, number>> => {
    await flusher.flush();
    return parseExposition((await sink.render()).body);
  };
  return { clock, store, xds, scrape };
}

it('reports connected, ACKs, NACKs, their versions and the age of the last ACK', async () => {
  const { clock, store, xds, scrape } = rig();
  expect(store.snapshot().gauges.get('ratelimit.xds.connected')).toBe(0);
  xds.update(
    status({
      acks: 3,
      nacks: 1,
      lastAck: { version: '7-abc', atMs: clock.nowMs() },
      lastNack: { version: '6-abc', atMs: clock.nowMs() - 5000, reason: 'bad unit' },
    }),
  );
  clock.advance(42_500);
  const { counters, gauges } = store.snapshot();
  expect(gauges.get('ratelimit.xds.connected')).toBe(1);
  expect(gauges.get('ratelimit.xds.update_age_seconds')).toBe(42);
  expect(counters.get('ratelimit.xds.acks')).toBe(3);
  expect(counters.get('ratelimit.xds.nacks')).toBe(1);
  expect(gauges.get('ratelimit.xds.last_ack_version.__version=7-abc')).toBe(1);
  expect(gauges.get('ratelimit.xds.last_nack_version.__version=6-abc')).toBe(1);

  const samples = await scrape();
  expect(samples.get('ratelimit_xds_connected')).toBe(1);
  expect(samples.get('ratelimit_xds_update_age_seconds')).toBe(42);
  expect(samples.get('ratelimit_xds_acks')).toBe(3);
  expect(samples.get('ratelimit_xds_nacks')).toBe(1);
  expect(samples.get('ratelimit_xds_last_ack_version{version="7-abc"}')).toBe(1);
  expect(samples.get('ratelimit_xds_last_nack_version{version="6-abc"}')).toBe(1);

  xds.update(status({ isConnected: false, acks: 3, nacks: 1 }));
  expect((await scrape()).get('ratelimit_xds_connected')).toBe(0);
});

it('keeps one series per version gauge, however many versions go by', async () => {
  const { clock, store, xds, scrape } = rig();
  for (let i = 1; i <= 50; i++)
    xds.update(status({ acks: i, lastAck: { version: `${i}-abc`, atMs: clock.nowMs() } }));
  const versions = [...store.snapshot().gauges.keys()].filter((k) =>
    k.startsWith('ratelimit.xds.last_ack_version'),
  );
  expect(versions).toEqual(['ratelimit.xds.last_ack_version.__version=50-abc']);
  const series = [...(await scrape()).keys()].filter((k) =>
    k.startsWith('ratelimit_xds_last_ack_version'),
  );
  expect(series).toEqual(['ratelimit_xds_last_ack_version{version="50-abc"}']);
  expect((await scrape()).get('ratelimit_xds_acks')).toBe(50);
});

it('counts from the totals it is handed, once each', () => {
  const { store, xds } = rig();
  xds.update(status({ acks: 2 }));
  xds.update(status({ acks: 2, isConnected: false }));
  xds.update(status({ acks: 5 }));
  expect(store.snapshot().counters.get('ratelimit.xds.acks')).toBe(5);
});
