// The gRPC listener under hostile or unlucky callers: deadlines, the last resort, and the
// limits of the limits section (streams, request size, preface, unfinished bodies, idle).
import type { Pending } from '../../../src/lib/pending';
import http2 from 'node:http2';
import net from 'node:net';
import { status } from '@grpc/grpc-js';
import type { RateLimitRequest, RateLimitResponse } from '../../../src/engine';
import { MemoryLogger } from '../../../src/lib/logger';
import { loadPackageDefinition } from '../../../src/lib/proto';
import { HealthState, RateLimitGrpcServer } from '../../../src/server';
import type { Decider } from '../../../src/server/grpc/rls-method';
import { LastResort } from '../../../src/server/last-resort';
import { loadSettings, type LimitsSettings } from '../../../src/settings';
import { STAT, StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { connect, frame, rawCall } from '../../helpers/h2-raw';

const http2constants = http2.constants;

const serialize = (
  loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
    'envoy.service.ratelimit.v3.RateLimitService'
  ] as unknown as { ShouldRateLimit: { requestSerialize: (value: unknown) => Buffer } }
).ShouldRateLimit.requestSerialize;

const REQUEST = frame(
  serialize({ domain: 'd', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] }),
);

const OK: RateLimitResponse = {
  overallCode: 'OK',
  statuses: [],
  responseHeadersToAdd: [],
  requestHeadersToAdd: [],
  dynamicMetadata: undefined,
};

/** A ShouldRateLimit call opened with its body still to write, and its grpc-status to come. */
function openCall(session: http2.ClientHttp2Session): {
  stream: http2.ClientHttp2Stream;
  answered: Promise<unknown>;
} {
  const stream = session.request({
    ':method': 'POST',
    ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  const answered = grpcStatusOf(stream);
  stream.resume();
  return { stream, answered };
}

/** The call's grpc-status, from its trailers or a trailers-only answer, once it closed. */
function grpcStatusOf(stream: http2.ClientHttp2Stream): Promise<unknown> {
  let grpcStatus: unknown;
  stream.on('response', (headers) => {
    grpcStatus ??= headers['grpc-status'];
  });
  stream.on('trailers', (trailers) => {
    grpcStatus = trailers['grpc-status'];
  });
  return new Promise((resolve) => {
    stream.on('close', () => {
      resolve(grpcStatus);
    });
  });
}

function limits(env: Record<string, string>): LimitsSettings {
  return loadSettings(env).limits;
}

async function startServer(
  decide: (request: RateLimitRequest) => Pending<RateLimitResponse>,
  env: Record<string, string> = {},
) {
  const stats = new StatsStore();
  const logger = new MemoryLogger();
  const engine: Decider = { shouldRateLimit: decide };
  const server = new RateLimitGrpcServer({
    settings: {
      host: '127.0.0.1',
      port: 0,
      uds: undefined,
      maxConnectionAgeMs: 0,
      maxConnectionAgeGraceMs: 0,
      http2: 'own',
      tls: undefined,
    },
    engine,
    health: new HealthState({ requireConfig: false }),
    stats,
    logger,
    limits: limits(env),
    lastResort: new LastResort(stats, logger),
    tracer: undefined,
  });
  const port = await server.listen();
  return { server, port, stats, logger };
}

const sessions: http2.ClientHttp2Session[] = [];
const servers: RateLimitGrpcServer[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await s.shutdown(0);
});

async function setUp(
  decide: (request: RateLimitRequest) => Pending<RateLimitResponse>,
  env: Record<string, string> = {},
) {
  const started = await startServer(decide, env);
  servers.push(started.server);
  const session = await connect(started.port);
  sessions.push(session);
  return { ...started, session };
}

describe('deadlines', () => {
  it('answers DEADLINE_EXCEEDED when grpc-timeout expires, without waiting for the backend', async () => {
    const { session } = await setUp(() => new Promise<RateLimitResponse>(() => undefined));
    const answer = await rawCall(session, REQUEST, { 'grpc-timeout': '200m' });
    expect(answer.grpcStatus).toBe(status.DEADLINE_EXCEEDED);
    expect(answer.ms).toBeGreaterThanOrEqual(190);
    expect(answer.ms).toBeLessThan(1500);
  });

  it('answers a call whose grpc-timeout is past the timer ceiling, and arms nothing for it', async () => {
    const { session, server } = await setUp(
      () => new Promise<RateLimitResponse>((resolve) => setTimeout(resolve, 50, OK)),
    );
    // 99,999,999 hours: a timer that long would fire at once; the call must wait for its answer.
    const answer = await rawCall(session, REQUEST, { 'grpc-timeout': '99999999H' });
    expect(answer.grpcStatus).toBe(status.OK);
    expect(answer.ms).toBeGreaterThanOrEqual(40);
    expect(waiting(server)).toBe(0);
  });

  it('drops the late answer of a call whose deadline passed, and counts nothing unexpected', async () => {
    let finish: (response: RateLimitResponse) => void = () => undefined;
    const { session, stats } = await setUp(
      () =>
        new Promise<RateLimitResponse>((resolve) => {
          finish = resolve;
        }),
    );
    const answer = await rawCall(session, REQUEST, { 'grpc-timeout': '50m' });
    expect(answer.grpcStatus).toBe(status.DEADLINE_EXCEEDED);
    finish(OK);
    expect((await rawCall(session, REQUEST, { 'grpc-timeout': '50m' })).grpcStatus).toBe(
      status.DEADLINE_EXCEEDED,
    );
    expect(stats.counter(STAT.unexpectedError).value).toBe(0);
  });

  /** The deadlines the server still waits on (none once every call has ended). */
  function waiting(server: RateLimitGrpcServer): number {
    const { queues } = (
      server as unknown as { deadlines: { queues: Map<number, { isEmpty: boolean }> } }
    ).deadlines;
    return [...queues.values()].filter((queue) => !queue.isEmpty).length;
  }

  it('lets go of the deadline of a call answered at once, or whose client left mid-body', async () => {
    // An engine whose store needs no I/O answers with the response itself, not a promise.
    const { session, server } = await setUp(() => OK);
    for (let i = 0; i < 3; i++)
      expect((await rawCall(session, REQUEST, { 'grpc-timeout': '1000S' })).grpcStatus).toBe(
        status.OK,
      );
    expect(waiting(server)).toBe(0);
    const stream = session.request({
      ':method': 'POST',
      ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
      'content-type': 'application/grpc',
      'grpc-timeout': '999S',
    });
    stream.on('error', () => undefined);
    stream.write(REQUEST.subarray(0, 6));
    await eventually(() => {
      expect(waiting(server)).toBe(1);
    });
    stream.close(http2constants.NGHTTP2_CANCEL);
    await eventually(() => {
      expect(waiting(server)).toBe(0);
    });
  });
});

describe('the last resort', () => {
  it('answers INTERNAL when building the answer throws, counts and logs it, and serves on', async () => {
    let calls = 0;
    const broken = { ...OK };
    Object.defineProperty(broken, 'statuses', {
      get: () => {
        throw new Error('a bug while encoding');
      },
    });
    const { session, stats, logger } = await setUp(() => {
      calls += 1;
      return Promise.resolve(calls === 1 ? broken : OK);
    });
    const first = await rawCall(session, REQUEST, { 'grpc-timeout': '5S' });
    expect(first.grpcStatus).toBe(status.INTERNAL);
    expect(stats.counter(STAT.unexpectedError).value).toBe(1);
    expect(logger.lines.some((l) => l.fields?.error === 'a bug while encoding')).toBe(true);
    expect((await rawCall(session, REQUEST)).grpcStatus).toBe(status.OK);
  });

  it('answers INTERNAL when the engine throws instead of rejecting', async () => {
    const { session, stats } = await setUp(() => {
      throw new Error('thrown, not rejected');
    });
    expect((await rawCall(session, REQUEST, { 'grpc-timeout': '5S' })).grpcStatus).toBe(
      status.INTERNAL,
    );
    expect(stats.counter(STAT.unexpectedError).value).toBe(1);
  });
});

describe('connection limits', () => {
  it('refuses a message larger than MAX_REQUEST_BYTES with RESOURCE_EXHAUSTED', async () => {
    const { session } = await setUp(() => Promise.resolve(OK), { MAX_REQUEST_BYTES: '2048' });
    const big = frame(serialize({ domain: 'x'.repeat(1000), descriptors: [] }));
    expect((await rawCall(session, big)).grpcStatus).toBe(status.OK);
    const huge = frame(Buffer.alloc(4096, 0x20));
    const answer = await rawCall(session, huge);
    expect(answer.grpcStatus).toBe(status.RESOURCE_EXHAUSTED);
    expect(answer.grpcMessage).toContain('MAX_REQUEST_BYTES');
  });

  it('advertises GRPC_MAX_CONCURRENT_STREAMS to the client', async () => {
    const { session } = await setUp(() => Promise.resolve(OK), {
      GRPC_MAX_CONCURRENT_STREAMS: '7',
    });
    expect(session.remoteSettings.maxConcurrentStreams).toBe(7);
  });

  it('reads a request that arrives in many DATA frames, as if it had come in one', async () => {
    const seen: RateLimitRequest[] = [];
    const { session } = await setUp((request) => {
      seen.push(request);
      return Promise.resolve(OK);
    });
    // Five descriptors of one 8,000-byte value each (MAX_DESCRIPTOR_VALUE_BYTES is 8,192).
    const descriptors = ['a', 'b', 'c', 'd', 'e'].map((v) => ({
      entries: [{ key: 'k', value: v.repeat(8000) }],
    }));
    const big = frame(serialize({ domain: 'pieces', descriptors }));
    const { stream, answered } = openCall(session);
    // One byte, then pieces of 7 KB, each its own write and so its own DATA frame.
    stream.write(big.subarray(0, 1));
    for (let at = 1; at < big.length; at += 7000) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      stream.write(big.subarray(at, at + 7000));
    }
    stream.end();
    expect(await answered).toBe(String(status.OK));
    expect(seen.map((r) => [r.domain, r.descriptors.map((d) => d.entries[0]?.value)])).toEqual([
      ['pieces', descriptors.map((d) => d.entries[0]?.value)],
    ]);
  });

  it('keeps a one-frame body whose END_STREAM comes in a later read', async () => {
    // The body is read into the buffer plaintext connections share, overwritten after each read
    // in the suites (H2_POISON_READS): kept as a view, it would be garbage by END_STREAM.
    const seen: RateLimitRequest[] = [];
    const { session } = await setUp((request) => {
      seen.push(request);
      return Promise.resolve(OK);
    });
    const { stream, answered } = openCall(session);
    stream.write(REQUEST);
    // A PING answered means the server has read the DATA frame before END_STREAM is sent.
    await new Promise<void>((resolve, reject) => {
      session.ping((err) => {
        if (err) reject(err);
        else resolve();
      });
    });
    stream.end();
    expect(await answered).toBe(String(status.OK));
    expect(seen.map((r) => [r.domain, r.descriptors[0]?.entries[0]?.value])).toEqual([['d', 'v']]);
  });

  it('refuses a body past the connection share of GRPC_MAX_BUFFERED_BYTES with REFUSED_STREAM, one budget for both layers', async () => {
    // A thirty-second of 1 MiB per connection: 32 KiB, two unfinished bodies of 15 KB.
    const { session, port } = await setUp(() => Promise.resolve(OK), {
      GRPC_MAX_BUFFERED_BYTES: String(1024 * 1024),
      MAX_REQUEST_BYTES: String(16 * 1024),
    });
    const calls = [openCall(session), openCall(session), openCall(session)];
    const rstCodes = calls.map(
      ({ stream }) =>
        new Promise<number>((resolve) => {
          stream.on('error', () => undefined);
          stream.on('close', () => {
            resolve(stream.rstCode);
          });
        }),
    );
    for (const { stream } of calls) stream.write(Buffer.alloc(15_000));
    expect(await rstCodes[2]).toBe(http2constants.NGHTTP2_REFUSED_STREAM);
    // The connection and its other calls go on, and so does another connection.
    calls[0]?.stream.end();
    expect(await calls[0]?.answered).toBeDefined();
    const other = await connect(port);
    sessions.push(other);
    expect((await rawCall(other, REQUEST)).grpcStatus).toBe(status.OK);
    expect((await rawCall(session, REQUEST)).grpcStatus).toBe(status.OK);
  });

  it('answers a call whose body never finishes within HEADER_TIMEOUT', async () => {
    const { session } = await setUp(() => Promise.resolve(OK), { HEADER_TIMEOUT: '300ms' });
    const stream = session.request({
      ':method': 'POST',
      ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
      'content-type': 'application/grpc',
    });
    stream.on('error', () => undefined);
    const started = performance.now();
    const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => {
      stream.on('response', resolve);
    });
    // Half of the request, and never the rest.
    stream.write(REQUEST.subarray(0, 6));
    expect((await trailers)['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('cuts a connection that sends no preface within HEADER_TIMEOUT', async () => {
    const { port } = await setUp(() => Promise.resolve(OK), { HEADER_TIMEOUT: '300ms' });
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    // Read, so that the end of the connection is seen.
    socket.resume();
    const started = performance.now();
    await new Promise<void>((resolve) =>
      socket.once('close', () => {
        resolve();
      }),
    );
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('closes a connection with no call open for IDLE_TIMEOUT', async () => {
    const { session } = await setUp(() => Promise.resolve(OK), { IDLE_TIMEOUT: '300ms' });
    expect((await rawCall(session, REQUEST)).grpcStatus).toBe(status.OK);
    await eventually(() => session.closed || session.destroyed, {
      what: 'the idle connection to be closed',
      timeoutMs: 3000,
    });
  });
});
