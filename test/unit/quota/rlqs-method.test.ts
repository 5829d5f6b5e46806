// StreamRateLimitQuotas on the real gRPC listener, driven by bare HTTP/2 streams: framing,
// statuses, the bounds per connection and per stream, releases, and the end at shutdown.
import http2 from 'node:http2';
import { getDefaultHighWaterMark, setDefaultHighWaterMark } from 'node:stream';
import { status } from '@grpc/grpc-js';
import { ManualClock } from '../../../src/lib/clock';
import { MemoryLogger } from '../../../src/lib/logger';
import {
  encodeResponse,
  MemoryDemandShare,
  QuotaService,
  STREAM_RATE_LIMIT_QUOTAS,
  type QuotaRuleSet,
} from '../../../src/quota';
import { messageType } from '../../../src/lib/proto';
import { HealthState, RateLimitGrpcServer } from '../../../src/server';
import { MessageStream } from '../../../src/server/grpc/message-stream';
import { LastResort } from '../../../src/server/last-resort';
import { loadSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { connect, frame } from '../../helpers/h2-raw';
import { LIMITS, reports, ruleSet } from './quota-fakes';

const reportsType = messageType(
  'envoy/service/rate_limit_quota/v3/rlqs.proto',
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);
const responseType = messageType(
  'envoy/service/rate_limit_quota/v3/rlqs.proto',
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaResponse',
);

const RULES: QuotaRuleSet = ruleSet('edge', [
  { bucket: { name: 'api' }, requests_per_unit: 1000, unit: 'second' },
]);

function reportBytes(domain: string, bucket: Record<string, string>, elapsedMs = 1): Buffer {
  const body = reports(domain, [{ bucket, elapsedMs, allowed: 1 }]);
  return frame(Buffer.from(reportsType.encode(reportsType.fromObject(body)).finish()));
}

/** Each response's shares (requests a second, as Envoy's token bucket fills), in order. */
function responses(body: Buffer): number[][] {
  const out: number[][] = [];
  const messages = new MessageStream(undefined, 1 << 24);
  for (const m of messages.push(body)) {
    const decoded = responseType.toObject(responseType.decode(m.buf.subarray(m.start, m.end)), {
      longs: Number,
    }) as {
      bucketAction: {
        quotaAssignmentAction?: {
          rateLimitStrategy?: {
            tokenBucket?: {
              tokensPerFill?: { value?: number };
              fillInterval?: { seconds?: number };
            };
          };
        };
      }[];
    };
    // The rate as Envoy computes it: tokens_per_fill / ToInt64Seconds(fill_interval).
    out.push(
      decoded.bucketAction.map((a) => {
        const bucket = a.quotaAssignmentAction?.rateLimitStrategy?.tokenBucket;
        if (bucket === undefined) return -1;
        return (bucket.tokensPerFill?.value ?? 0) / (bucket.fillInterval?.seconds ?? 0);
      }),
    );
  }
  return out;
}

/** The shares of every response, one after the other. */
function shares(body: Buffer): number[] {
  return responses(body).flat();
}

function reportMany(domain: string, buckets: Record<string, string>[]): Buffer {
  const body = reports(
    domain,
    buckets.map((bucket) => ({ bucket, elapsedMs: 1, allowed: 1 })),
  );
  return frame(Buffer.from(reportsType.encode(reportsType.fromObject(body)).finish()));
}

function connectWith(port: number, settings: http2.Settings): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, { settings });
    session.on('error', () => undefined);
    session.once('remoteSettings', () => {
      cleanups.push(() => {
        session.destroy();
      });
      resolve(session);
    });
    session.once('error', reject);
  });
}

interface Call {
  readonly stream: http2.ClientHttp2Stream;
  readonly chunks: Buffer[];
  readonly done: Promise<{ grpcStatus: number | undefined; grpcMessage: string | undefined }>;
}

function open(session: http2.ClientHttp2Session): Call {
  const stream = session.request({
    ':method': 'POST',
    ':path': STREAM_RATE_LIMIT_QUOTAS,
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  const chunks: Buffer[] = [];
  let trailers: http2.IncomingHttpHeaders = {};
  stream.on('response', (h) => (trailers = h));
  stream.on('trailers', (t) => (trailers = t));
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('error', () => undefined);
  const done = new Promise<{ grpcStatus: number | undefined; grpcMessage: string | undefined }>(
    (resolve) => {
      stream.on('close', () => {
        const s = trailers['grpc-status'];
        const m = trailers['grpc-message'];
        resolve({
          grpcStatus: s === undefined ? undefined : Number(s),
          grpcMessage: typeof m === 'string' ? decodeURIComponent(m) : undefined,
        });
      });
    },
  );
  return { stream, chunks, done };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(http2Impl: 'own' | 'node', env: Record<string, string> = {}) {
  const stats = new StatsStore();
  const logger = new MemoryLogger();
  const quota = new QuotaService({
    clock: new ManualClock(1_700_000_000_000),
    share: new MemoryDemandShare('t'),
    limits: { ...LIMITS, maxStreamsPerConnection: 2 },
    logger,
    stats: undefined,
  });
  quota.setRules(RULES);
  const server = new RateLimitGrpcServer({
    settings: {
      host: '127.0.0.1',
      port: 0,
      uds: undefined,
      maxConnectionAgeMs: 0,
      maxConnectionAgeGraceMs: 0,
      tls: undefined,
      http2: http2Impl,
    },
    engine: { shouldRateLimit: () => Promise.reject(new Error('not used')) },
    health: new HealthState({ requireConfig: false }),
    stats,
    logger,
    limits: loadSettings(env).limits,
    lastResort: new LastResort(stats, logger),
    tracer: undefined,
    quota: { streams: quota, maxStreamsPerConnection: 2, maxBucketIdBytes: 1024 },
  });
  const port = await server.listen();
  let isShut = false;
  const shutdown = async (graceMs: number): Promise<void> => {
    isShut = true;
    await server.shutdown(graceMs);
  };
  cleanups.push(async () => {
    if (!isShut) await server.shutdown(0);
  });
  const session = await connect(port);
  cleanups.push(() => {
    session.destroy();
  });
  return { quota, session, port, shutdown };
}

test('messages split across chunks and several in one chunk are read in order', () => {
  const one = reportBytes('edge', { name: 'a' });
  const two = reportBytes('edge', { name: 'b' });
  const all = Buffer.concat([one, two, one]);
  const stream = new MessageStream(undefined, 1024);
  const got = [...all].map((byte) => stream.push(Buffer.from([byte])).length);
  expect(got.reduce((a, b) => a + b, 0)).toBe(3);
  expect(stream.push(all).length).toBe(3);
  expect(stream.isCut).toBe(false);
  stream.push(one.subarray(0, 7));
  expect(stream.isCut).toBe(true);
  expect(() => new MessageStream(undefined, 4).push(one)).toThrow(/MAX_REQUEST_BYTES/);
});

describe.each(['own', 'node'] as const)('on GRPC_HTTP2=%s', (impl) => {
  test('a report is answered with an assignment; half-closing ends the call with OK', async () => {
    const { session, quota } = await setUp(impl);
    const call = open(session);
    call.stream.write(reportBytes('edge', { name: 'api' }));
    await eventually(() => shares(Buffer.concat(call.chunks)).length === 1);
    expect(shares(Buffer.concat(call.chunks))).toEqual([1000]);
    call.stream.end();
    expect(await call.done).toMatchObject({ grpcStatus: status.OK });
    expect(quota.openStreams.size).toBe(0);
  });

  test('a bad report ends the call INVALID_ARGUMENT naming the field; bytes that do not parse too', async () => {
    const { session } = await setUp(impl);
    const bad = open(session);
    bad.stream.write(reportBytes('', { name: 'api' }));
    expect(await bad.done).toEqual({
      grpcStatus: status.INVALID_ARGUMENT,
      grpcMessage: 'domain: must not be empty',
    });
    const garbage = open(session);
    garbage.stream.write(frame(Buffer.from([0x0f])));
    expect(await garbage.done).toMatchObject({
      grpcStatus: status.INVALID_ARGUMENT,
      grpcMessage: 'the message is not a RateLimitQuotaUsageReports',
    });
  });

  test('a message past MAX_REQUEST_BYTES ends the call RESOURCE_EXHAUSTED', async () => {
    const { session } = await setUp(impl, { MAX_REQUEST_BYTES: '1024' });
    const call = open(session);
    call.stream.write(reportBytes('edge', { name: 'x'.repeat(2000) }));
    expect(await call.done).toMatchObject({ grpcStatus: status.RESOURCE_EXHAUSTED });
  });

  test('a stream that reports more than its connection may buffer stays open', async () => {
    // GRPC_MAX_BUFFERED_BYTES at its least: 256 KiB per connection, 1 MiB in all.
    const { session } = await setUp(impl, {
      GRPC_MAX_BUFFERED_BYTES: String(1024 * 1024),
      MAX_REQUEST_BYTES: String(64 * 1024),
    });
    const call = open(session);
    const buckets = Array.from({ length: 20 }, (_, i) => ({ name: 'api', n: String(i) }));
    const report = reportMany('edge', buckets);
    for (let sent = 0; sent < 1024 * 1024; sent += report.length) call.stream.write(report);
    call.stream.write(reportBytes('edge', { name: 'api', n: 'last' }));
    await eventually(() => shares(Buffer.concat(call.chunks)).length === 21 || call.stream.closed, {
      what: 'the last bucket assigned',
    });
    expect(call.stream.closed).toBe(false);
    expect(shares(Buffer.concat(call.chunks))).toHaveLength(21);
  });

  test('a connection holds at most RLQS_MAX_STREAMS_PER_CONNECTION streams; a reset one frees its place', async () => {
    const { session, quota } = await setUp(impl);
    const calls = [open(session), open(session)];
    for (const c of calls) c.stream.write(reportBytes('edge', { name: 'api' }));
    await eventually(() => quota.openStreams.size === 2);
    const third = open(session);
    third.stream.write(reportBytes('edge', { name: 'api' }));
    expect(await third.done).toMatchObject({
      grpcStatus: status.RESOURCE_EXHAUSTED,
      grpcMessage: expect.stringMatching(/RLQS_MAX_STREAMS_PER_CONNECTION/) as unknown,
    });
    calls[0]?.stream.close(http2.constants.NGHTTP2_CANCEL);
    await eventually(() => quota.openStreams.size === 1, { what: 'the reset stream released' });
    const fourth = open(session);
    fourth.stream.write(reportBytes('edge', { name: 'api' }));
    await eventually(() => quota.openStreams.size === 2);
  });

  test('a client that does not read holds back a bounded amount, then gets the latest shares', async () => {
    const { session, quota, port } = await setUp(impl);
    // A small window and a paused stream: what the server sends piles up on its side.
    const slowSession = await connectWith(port, { initialWindowSize: 1024 });
    // A paused node:http2 client still takes in what fits its readable buffer and opens the
    // window for more: 16 KiB up to Node 20, 64 KiB from Node 22 (nodejs/node#52037), which
    // lets nine more responses through on the client's side. The client's buffer is held at
    // 16 KiB on every Node, so that what is counted here is what the server held back.
    const readable = getDefaultHighWaterMark(false);
    setDefaultHighWaterMark(false, 16 * 1024);
    const slow = open(slowSession);
    setDefaultHighWaterMark(false, readable);
    slow.stream.pause();
    const buckets = Array.from({ length: 200 }, (_, i) => ({ name: 'api', n: String(i) }));
    slow.stream.write(reportMany('edge', buckets));
    await eventually(() => quota.openStreams.size === 1);
    // Each other stream that comes and goes moves all 200 shares: 40 responses of ~7 KB.
    for (let i = 0; i < 20; i++) {
      const other = open(session);
      other.stream.write(reportMany('edge', buckets));
      await eventually(() => quota.openStreams.size === 2);
      other.stream.close(http2.constants.NGHTTP2_CANCEL);
      await eventually(() => quota.openStreams.size === 1);
    }
    slow.stream.resume();
    await eventually(
      async () => {
        await quota.tick();
        const got = responses(Buffer.concat(slow.chunks));
        return got.length > 0 && got.at(-1)?.every((share) => share === 1000) === true;
      },
      { what: 'the latest shares to arrive' },
    );
    const got = responses(Buffer.concat(slow.chunks));
    expect(got.length).toBeGreaterThan(2);
    expect(got.length).toBeLessThan(20);
  });

  test('at shutdown the streams end UNAVAILABLE after the GOAWAY, and the service lets them go', async () => {
    const { session, quota, shutdown } = await setUp(impl);
    const call = open(session);
    call.stream.write(reportBytes('edge', { name: 'api' }));
    await eventually(() => quota.openStreams.size === 1);
    let sawGoaway = false;
    session.on('goaway', () => (sawGoaway = true));
    const stopping = shutdown(5000);
    expect(await call.done).toEqual({
      grpcStatus: status.UNAVAILABLE,
      grpcMessage: 'the server is shutting down',
    });
    expect(sawGoaway).toBe(true);
    await stopping;
    expect(quota.openStreams.size).toBe(0);
  });
});

test('responses are framed RateLimitQuotaResponse messages', () => {
  const bytes = encodeResponse([{ kind: 'abandon', bucket: new Map([['a', 'b']]) }]);
  expect(responseType.decode(bytes).toJSON()).toEqual({
    bucketAction: [{ bucketId: { bucket: { a: 'b' } }, abandonAction: {} }],
  });
});
