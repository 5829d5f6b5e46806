// The gRPC listener on node:http2 (GRPC_HTTP2=node): the same layer's connection handling as
// on the own HTTP/2, as far as node:http2 has it: deadlines, unfinished bodies, the preface
// and idle timeouts, connection ageing with calls in flight, and drain at shutdown.
import http2 from 'node:http2';
import net from 'node:net';
import { status } from '@grpc/grpc-js';
import type { RateLimitRequest, RateLimitResponse } from '../../../src/engine';
import { MemoryLogger } from '../../../src/lib/logger';
import { loadPackageDefinition } from '../../../src/lib/proto';
import type { H2Stream } from '../../../src/server/h2';
import { HealthState, RateLimitGrpcServer } from '../../../src/server';
import { createNodeHttp2Server, serveOnNodeHttp2 } from '../../../src/server/grpc/node-http2';
import { LastResort } from '../../../src/server/last-resort';
import { loadSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import {
  END_HEADERS,
  frame as h2Frame,
  RawClient,
  request,
  T,
  words,
} from '../../helpers/h2-frames';
import { connect, frame, rawCall, RLS_PATH } from '../../helpers/h2-raw';

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
const never = (): Promise<RateLimitResponse> => new Promise(() => undefined);

const servers: RateLimitGrpcServer[] = [];
const nodeServers: http2.Http2Server[] = [];
const clients: http2.ClientHttp2Session[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  for (const server of servers.splice(0)) await server.shutdown(0);
  for (const server of nodeServers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

interface Options {
  readonly env?: Record<string, string>;
  readonly maxConnectionAgeMs?: number;
  readonly maxConnectionAgeGraceMs?: number;
}

async function start(
  decide: (request: RateLimitRequest) => Promise<RateLimitResponse>,
  options: Options = {},
): Promise<{ server: RateLimitGrpcServer; port: number }> {
  const stats = new StatsStore();
  const logger = new MemoryLogger();
  const server = new RateLimitGrpcServer({
    settings: {
      host: '127.0.0.1',
      port: 0,
      uds: undefined,
      maxConnectionAgeMs: options.maxConnectionAgeMs ?? 0,
      maxConnectionAgeGraceMs: options.maxConnectionAgeGraceMs ?? 0,
      http2: 'node',
      tls: undefined,
    },
    engine: { shouldRateLimit: decide },
    health: new HealthState({ requireConfig: false }),
    stats,
    logger,
    limits: loadSettings(options.env ?? {}).limits,
    lastResort: new LastResort(stats, logger),
    tracer: undefined,
  });
  servers.push(server);
  return { server, port: await server.listen() };
}

async function client(port: number): Promise<http2.ClientHttp2Session> {
  const session = await connect(port);
  clients.push(session);
  return session;
}

const closedOrGone = (session: http2.ClientHttp2Session) => (): boolean =>
  session.closed || session.destroyed;

it('answers a call, and DEADLINE_EXCEEDED when grpc-timeout expires first', async () => {
  const { port } = await start((request) =>
    request.descriptors.length > 0 ? Promise.resolve(OK) : never(),
  );
  const session = await client(port);
  expect((await rawCall(session, REQUEST)).grpcStatus).toBe(status.OK);
  const empty = frame(serialize({ domain: 'd' }));
  const late = await rawCall(session, empty, { 'grpc-timeout': '100m' });
  expect(late.grpcStatus).toBe(status.DEADLINE_EXCEEDED);
});

it('answers a call whose body never finishes within HEADER_TIMEOUT', async () => {
  const { port } = await start(() => Promise.resolve(OK), { env: { HEADER_TIMEOUT: '300ms' } });
  const session = await client(port);
  const stream = session.request({
    ':method': 'POST',
    ':path': '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
    'content-type': 'application/grpc',
  });
  stream.on('error', () => undefined);
  const answer = new Promise<http2.IncomingHttpHeaders>((resolve) => {
    stream.on('response', resolve);
  });
  stream.write(REQUEST.subarray(0, 6));
  expect((await answer)['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
});

it('cuts a connection that sends no preface within HEADER_TIMEOUT', async () => {
  const { port } = await start(() => Promise.resolve(OK), { env: { HEADER_TIMEOUT: '300ms' } });
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.resume();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    socket.once('close', () => {
      resolve();
    });
  });
  expect(performance.now() - started).toBeLessThan(5000);
});

it('closes a connection with no call open for IDLE_TIMEOUT', async () => {
  const { port } = await start(() => Promise.resolve(OK), { env: { IDLE_TIMEOUT: '300ms' } });
  const session = await client(port);
  expect((await rawCall(session, REQUEST)).grpcStatus).toBe(status.OK);
  await eventually(closedOrGone(session), { what: 'the idle connection to be closed' });
});

it('ages out a connection with GOAWAY, and the call in flight still gets its answer', async () => {
  let answer: (response: RateLimitResponse) => void = () => undefined;
  const { port } = await start(
    () =>
      new Promise((resolve) => {
        answer = resolve;
      }),
    { maxConnectionAgeMs: 300, maxConnectionAgeGraceMs: 5000 },
  );
  const session = await client(port);
  const goaway = new Promise<number>((resolve) => {
    session.once('goaway', (code: number) => {
      resolve(code);
    });
  });
  const call = rawCall(session, REQUEST);
  expect(await goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
  answer(OK);
  expect((await call).grpcStatus).toBe(status.OK);
  await eventually(closedOrGone(session), { what: 'the aged connection to end' });
});

it('drains at shutdown: health watches end with OK, calls in flight are answered', async () => {
  let answer: (response: RateLimitResponse) => void = () => undefined;
  const { server, port } = await start(
    () =>
      new Promise((resolve) => {
        answer = resolve;
      }),
  );
  servers.pop();
  const session = await client(port);
  const watch = rawCall(session, frame(Buffer.alloc(0)), {
    ':path': '/grpc.health.v1.Health/Watch',
  });
  const call = rawCall(session, REQUEST);
  // Both calls have reached the server once a third, answered at once, has.
  expect((await rawCall(session, frame(Buffer.alloc(0)), { ':path': '/nope' })).grpcStatus).toBe(
    status.UNIMPLEMENTED,
  );
  const drained = server.shutdown(5000);
  answer(OK);
  expect((await call).grpcStatus).toBe(status.OK);
  const watched = await watch;
  expect(watched.grpcStatus).toBe(status.OK);
  expect(watched.body.length).toBeGreaterThan(0);
  await drained;
  await eventually(closedOrGone(session), { what: 'the drained connection to end' });
});

describe('a node:http2 stream as an H2Stream', () => {
  /** A node:http2 server whose streams `serve` answers through the H2Stream calls. */
  async function adapterServer(serve: (stream: H2Stream) => void): Promise<number> {
    const server = createNodeHttp2Server({ maxConcurrentStreams: 10, maxHeaderListBytes: 65536 });
    serveOnNodeHttp2(server, {
      session: () => undefined,
      stream: (stream) => {
        serve(stream);
      },
    });
    nodeServers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  interface Seen {
    readonly headers: http2.IncomingHttpHeaders;
    readonly trailers: http2.IncomingHttpHeaders | undefined;
    readonly body: string;
    readonly rstCode: number;
  }

  async function request(port: number): Promise<Seen> {
    const session = await client(port);
    const stream = session.request({ ':method': 'POST', ':path': '/' });
    stream.on('error', () => undefined);
    stream.end();
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders | undefined;
    let body = '';
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
    await new Promise((resolve) => stream.once('close', resolve));
    return { headers, trailers, body, rstCode: stream.rstCode };
  }

  it('sends headers, data and trailers in order, without a Date header', async () => {
    const port = await adapterServer((stream) => {
      stream.respond({ ':status': 200, 'x-h': 'h' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => {
        stream.sendTrailers({ 'x-t': 't' });
      });
      stream.write(Buffer.from('a'));
      stream.end(Buffer.from('b'));
    });
    const seen = await request(port);
    expect([seen.headers['x-h'], seen.headers.date, seen.body]).toEqual(['h', undefined, 'ab']);
    expect(seen.trailers?.['x-t']).toBe('t');
    expect(seen.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
  });

  it('ends a body that wants no trailers cleanly', async () => {
    const port = await adapterServer((stream) => {
      stream.write(Buffer.from('implicit 200'));
      stream.end();
    });
    const seen = await request(port);
    expect([seen.headers[':status'], seen.body, seen.rstCode]).toEqual([
      200,
      'implicit 200',
      http2.constants.NGHTTP2_NO_ERROR,
    ]);
  });

  it('resets with the code given, and the stream reads as closed at once', async () => {
    let closedAtOnce = false;
    const port = await adapterServer((stream) => {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      closedAtOnce = stream.closed;
    });
    const seen = await request(port);
    expect([seen.rstCode, closedAtOnce]).toEqual([http2.constants.NGHTTP2_REFUSED_STREAM, true]);
  });
});

describe('streams whose body has not begun, on node:http2: counted as requests held', () => {
  const CALL = request(RLS_PATH, [
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
  ]);
  const headersOnly = (id: number): Buffer => h2Frame(T.HEADERS, END_HEADERS, id, CALL);
  const refused = (raw: RawClient): number[] =>
    raw.frames.filter((f) => f.type === T.RST_STREAM).map((f) => f.stream);

  it('hold a request each from the turn that opened them, as on the own HTTP/2; past the share, REFUSED_STREAM', async () => {
    const { port } = await start(never, { env: { GRPC_MAX_BUFFERED_REQUESTS: '64' } });
    const raw = new RawClient(port);
    try {
      // Forty streams with HEADERS and nothing after. Past half the total (32), the one peer
      // holding them is past its share: the last eight are refused, unprocessed.
      raw.send(...Array.from({ length: 40 }, (_, i) => headersOnly(1 + 2 * i)));
      await eventually(() => refused(raw).length === 8, { what: 'eight streams refused' });
      expect(refused(raw)).toEqual(Array.from({ length: 8 }, (_, i) => 1 + 2 * (32 + i)));
      const codes = raw.frames.filter((f) => f.type === T.RST_STREAM);
      expect(codes.every((f) => f.payload.readUInt32BE(0) === 0x7)).toBe(true);
      // The client's reset lets its request go. A body that begins moves its request from
      // the waiting to the kept (the layer holds the unfinished message), so it still counts:
      // one fits again, and a second does not.
      raw.send(h2Frame(T.DATA, 0, 1, Buffer.from([0])), h2Frame(T.RST_STREAM, 0, 3, words(0x8)));
      await raw.roundTrip();
      raw.send(headersOnly(101), headersOnly(103));
      await eventually(() => refused(raw).length === 9, { what: 'the second refused' });
      await raw.roundTrip();
      expect(refused(raw).slice(8)).toEqual([103]);
    } finally {
      raw.destroy();
    }
  });
});
