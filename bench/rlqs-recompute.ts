// What one usage report costs the quota service when many Envoys watch its bucket, measured in
// process (`node dist/bench/rlqs-recompute.js [watchers...]`): the report's own handling and the
// recomputation it leads to, up to the end of its event-loop turn. Not a row of `npm run bench`.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { ManualClock } from '../src/lib/clock';
import { silentLogger } from '../src/lib/logger';
import {
  MemoryDemandShare,
  mergeQuotaRules,
  parseQuotaBuckets,
  QuotaService,
  type QuotaStream,
  type QuotaStreamSink,
  type WireUsageReports,
} from '../src/quota';

const SINK: QuotaStreamSink = { send: () => undefined, end: () => undefined, canSend: () => true };
const BUCKET = { bucketId: { bucket: { name: 'api' } } };

/** A report of `allowed` requests over a second; over a millisecond, a watch. */
function report(seconds: 0 | 1, allowed: number): WireUsageReports {
  // A millisecond, not Envoy's 0 s: the service took no 0 before it accepted Envoy's watch.
  const timeElapsed = seconds === 0 ? { seconds: 0, nanos: 1_000_000 } : { seconds, nanos: 0 };
  return {
    domain: 'edge',
    bucketQuotaUsages: [{ ...BUCKET, timeElapsed, numRequestsAllowed: allowed }],
  };
}

function service(): QuotaService {
  const parsed = parseQuotaBuckets(
    [{ bucket: { name: 'api' }, requests_per_unit: 1_000_000, unit: 'second' }],
    { domain: 'edge', source: 'bench' },
  );
  if (!parsed.ok) throw new Error('the bench rule does not compile');
  const merged = mergeQuotaRules(parsed.rules);
  if (!merged.ok) throw new Error('the bench rule is written twice');
  const quota = new QuotaService({
    clock: new ManualClock(1_700_000_000_000),
    share: new MemoryDemandShare('bench'),
    limits: {
      maxBucketsPerStream: 10,
      maxStreamsPerConnection: 100,
      tickMs: 1000,
      shareTtlMs: 5000,
      maxStreams: 1_000_000,
      maxBuckets: 1_000_000,
      maxBucketsWithoutRule: 1_000_000,
      maxBucketIdBytes: 1024,
      maxBucketIdBytesTotal: 1 << 30,
    },
    logger: silentLogger,
    stats: undefined,
  });
  quota.setRules(merged.set);
  return quota;
}

interface Costs {
  /** Microseconds a report costs in a turn of its own, with what it leads to in that turn. */
  readonly alone: number;
  /** Microseconds a report costs when 100 share a turn. */
  readonly shared: number;
  /** Microseconds a tick costs, which shares the bucket out again. */
  readonly tick: number;
}

async function measure(watchers: number): Promise<Costs> {
  const quota = service();
  const streams: QuotaStream[] = [];
  for (let i = 0; i < watchers; i++) {
    const stream = quota.openStream(SINK, 'bench');
    stream.receive(report(0, 0));
    streams.push(stream);
  }
  await nextTurn();
  const rounds = Math.max(20, Math.min(200, Math.floor(200_000 / watchers)));
  // The watches' garbage collected before anything is timed.
  for (let i = 0; i < 5; i++) await nextTurn();
  let started = performance.now();
  for (let i = 0; i < rounds; i++) {
    streams[i % watchers]?.receive(report(1, 100 + (i % 7) * 40));
    await nextTurn();
  }
  const alone = ((performance.now() - started) * 1000) / rounds;
  started = performance.now();
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < 100; j++) streams[(i * 100 + j) % watchers]?.receive(report(1, 100 + j));
    await nextTurn();
  }
  const shared = ((performance.now() - started) * 1000) / (rounds * 100);
  started = performance.now();
  for (let i = 0; i < 10; i++) await quota.tick();
  const tick = ((performance.now() - started) * 1000) / 10;
  await quota.close();
  return { alone, shared, tick };
}

async function main(): Promise<void> {
  const counts = process.argv.slice(2).map(Number);
  for (const watchers of counts.length > 0 ? counts : [10, 1000, 10_000]) {
    const { alone, shared, tick } = await measure(watchers);
    console.log(
      `${String(watchers).padStart(6)} watchers: ${alone.toFixed(1)} µs a report alone in its turn, ${shared.toFixed(1)} µs a report when 100 share a turn, ${tick.toFixed(0)} µs a tick`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
