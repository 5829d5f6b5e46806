// RLQS reports count against their connection's turn budget as frames do: each usage a report
// carries is charged USAGE_WORK_BYTES on the reader of the connection it came on.
import http2 from 'node:http2';
import { ManualClock } from '../../../src/lib/clock';
import { MemoryLogger } from '../../../src/lib/logger';
import { messageType } from '../../../src/lib/proto';
import { MemoryDemandShare, QuotaService, STREAM_RATE_LIMIT_QUOTAS } from '../../../src/quota';
import { HealthState, RateLimitGrpcServer } from '../../../src/server';
import { USAGE_WORK_BYTES } from '../../../src/server/grpc/rlqs-method';
import { FrameReader } from '../../../src/server/h2/reader';
import { LastResort } from '../../../src/server/last-resort';
import { loadSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { frame } from '../../helpers/h2-raw';
import { LIMITS, reports, ruleSet } from './quota-fakes';

const reportsType = messageType(
  'envoy/service/rate_limit_quota/v3/rlqs.proto',
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  jest.restoreAllMocks();
});

test('a report of 700 usages is charged 700 usages of work on its connection', async () => {
  const logger = new MemoryLogger();
  const stats = new StatsStore();
  const quota = new QuotaService({
    clock: new ManualClock(1_700_000_000_000),
    share: new MemoryDemandShare('t'),
    limits: { ...LIMITS, maxBucketsPerStream: 1000 },
    logger,
    stats: undefined,
  });
  quota.setRules(
    ruleSet('edge', [{ bucket: { name: '*' }, requests_per_unit: 10, unit: 'second' }]),
  );
  const server = new RateLimitGrpcServer({
    settings: {
      host: '127.0.0.1',
      port: 0,
      uds: undefined,
      maxConnectionAgeMs: 0,
      maxConnectionAgeGraceMs: 0,
      tls: undefined,
      http2: 'own',
    },
    engine: { shouldRateLimit: () => Promise.reject(new Error('not used')) },
    health: new HealthState({ requireConfig: false }),
    stats,
    logger,
    limits: loadSettings({}).limits,
    lastResort: new LastResort(stats, logger),
    tracer: undefined,
    quota: { streams: quota, maxStreamsPerConnection: 2, maxBucketIdBytes: 1024 },
  });
  const port = await server.listen();
  cleanups.push(() => server.shutdown(0));
  const charged: number[] = [];
  const original = FrameReader.prototype.charge;
  jest.spyOn(FrameReader.prototype, 'charge').mockImplementation(function (
    this: FrameReader,
    bytes: number,
  ) {
    charged.push(bytes);
    original.call(this, bytes);
  });
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  cleanups.push(() => {
    session.destroy();
  });
  const stream = session.request({
    ':method': 'POST',
    ':path': STREAM_RATE_LIMIT_QUOTAS,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.on('error', () => undefined);
  const usages = Array.from({ length: 700 }, (_, i) => ({
    bucket: { name: `b${i}` },
    elapsedMs: 1,
    allowed: 1,
  }));
  const body = reportsType.encode(reportsType.fromObject(reports('edge', usages))).finish();
  stream.write(frame(Buffer.from(body)));
  await eventually(() => charged.includes(700 * USAGE_WORK_BYTES));
  expect(quota.watchCounts.watches).toBe(700);
});
