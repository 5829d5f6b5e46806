// The quota service's caps against Envoys as the rate_limit_quota filter behaves
// (test/helpers/rlqs-envoy.ts, written from its source: global_client_impl.cc's
// createBucketImpl reports a new bucket at once, alone; buildReports reports every cached bucket
// on each 5 s tick; onRemoteClose drops the stream until the next tick), on one manual clock.
// Unruled buckets come from request attributes end users control: one Envoy filling
// RLQS_MAX_BUCKETS_WITHOUT_RULE must cost no other Envoy its ruled bucket's assignment, end no
// stream, and leave the budget held.
import { ManualClock } from '../../../src/lib/clock';
import { EnvoyRlqsClient, ENVOY_REPORT_INTERVAL_MS } from '../../helpers/rlqs-envoy';
import { InProcessRlqsTransport } from '../../helpers/rlqs-wire';
import { harness, ruleSet } from './quota-fakes';

const BUDGET = 50;
const RULED = { name: 'api', tenant: 'acme' };
const SERVICE_TICK_MS = 1000;
const STEP_MS = 10;
const WINDOW_MS = 5000;
const CAP = 100;

const rules = ruleSet('edge', [
  { bucket: { name: 'api', tenant: '*' }, requests_per_unit: BUDGET, unit: 'second' },
]);

test('one Envoy fills RLQS_MAX_BUCKETS_WITHOUT_RULE: another is assigned its ruled bucket within a tick, no stream ends, the budget holds', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const h = harness(rules, {
    clock,
    limits: { tickMs: SERVICE_TICK_MS, maxBucketsWithoutRule: CAP, maxBucketsPerStream: 10_000 },
  });
  const nowMs = (): number => clock.nowMs();
  const envoy = (peer: string): EnvoyRlqsClient =>
    new EnvoyRlqsClient({
      domain: 'edge',
      transport: new InProcessRlqsTransport(() => h.service, peer),
      nowMs,
    });
  const flooder = envoy('10.0.0.1:40000');
  const victim = envoy('10.0.0.2:40000');
  const startMs = clock.nowMs();

  // End users send the first Envoy requests with fresh values of a header the bucket id reads,
  // as many as the cap holds.
  for (let i = 0; i < CAP; i++) flooder.request({ name: 'web', user: `u${i}` });
  expect(h.service.watchCounts.withoutRule).toBe(CAP);

  // The second Envoy's first request makes an unruled bucket, then its traffic goes to the
  // ruled one at 80 a second; each tick reports both, the unruled one first.
  victim.request({ name: 'web', user: 'victim' });
  let assignedAtMs: number | undefined;
  let nextEnvoyTickMs = startMs + ENVOY_REPORT_INTERVAL_MS;
  let nextServiceTickMs = startMs + SERVICE_TICK_MS;
  let arrivals = 0;
  const windows: number[] = [];
  const firstRuledMs = clock.nowMs();
  while (clock.nowMs() < startMs + 60_000) {
    const before = victim.admitted;
    clock.advance(STEP_MS);
    arrivals += (80 * STEP_MS) / 1000;
    for (; arrivals >= 1; arrivals -= 1) victim.request(RULED);
    if (clock.nowMs() >= nextEnvoyTickMs) {
      nextEnvoyTickMs += ENVOY_REPORT_INTERVAL_MS;
      flooder.tick();
      victim.tick();
    }
    if (clock.nowMs() >= nextServiceTickMs) {
      nextServiceTickMs += SERVICE_TICK_MS;
      await h.service.tick();
    }
    if (assignedAtMs === undefined && victim.rateOf(RULED) !== Infinity)
      assignedAtMs = clock.nowMs();
    const w = Math.floor((clock.nowMs() - startMs - 1) / WINDOW_MS);
    windows[w] = (windows[w] ?? 0) + victim.admitted - before;
  }

  expect(assignedAtMs).toBeDefined();
  expect((assignedAtMs ?? Infinity) - firstRuledMs).toBeLessThanOrEqual(ENVOY_REPORT_INTERVAL_MS);
  expect(victim.rateOf(RULED)).toBeCloseTo(BUDGET, 5);
  expect(victim.streamEnds).toEqual([]);
  expect(flooder.streamEnds).toEqual([]);
  // The first window holds the first request of each bucket and the first full token bucket.
  for (const admitted of windows.slice(1))
    expect(admitted).toBeLessThanOrEqual(BUDGET * (WINDOW_MS / 1000) * 1.05);
  // The victim's unruled bucket is refused at each of its 12 ticks, counted under the cap's name.
  expect(
    h.stats.counter('ratelimit.rlqs.refused.max_buckets_without_rule').value,
  ).toBeGreaterThanOrEqual(12);
});
