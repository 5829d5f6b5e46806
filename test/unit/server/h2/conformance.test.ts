// RFC 9113 and RFC 7541 rules a conformance tester checks, each as the raw frames that break
// it: malformed requests never reach a handler, stream states answer as section 5.1 says, and
// the encoder follows the client's header table size.
import net from 'node:net';
import http2 from 'node:http2';
import { acceptH2 } from '../../../../src/server/h2';
import { routeCalls } from '../../../../src/server/grpc/router';
import { LastResort } from '../../../../src/server';
import { MemoryLogger } from '../../../../src/lib/logger';
import { StatsStore } from '../../../../src/stats';
import {
  block,
  END_HEADERS,
  END_STREAM,
  frame,
  PRIORITY_FLAG,
  RawClient,
  request,
  settings,
  T,
} from '../../../helpers/h2-frames';
import { serveEcho, type Served } from '../../../helpers/h2-echo';

let served: Served;
const clients: RawClient[] = [];
function open(port = served.port): RawClient {
  const client = new RawClient(port);
  clients.push(client);
  return client;
}
beforeEach(async () => {
  served = await serveEcho(4);
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await served.close();
});

const PROTOCOL_ERROR = 0x1;
const STREAM_CLOSED = 0x5;

describe('malformed requests: RST_STREAM PROTOCOL_ERROR, no handler sees them', () => {
  const malformed: [string, Buffer][] = [
    [
      'no :scheme',
      block([
        [':method', 'POST'],
        [':path', '/'],
      ]),
    ],
    [
      'no :path',
      block([
        [':method', 'POST'],
        [':scheme', 'http'],
      ]),
    ],
    [
      'an empty :path',
      block([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', ''],
      ]),
    ],
    [
      'no :method',
      block([
        [':scheme', 'http'],
        [':path', '/'],
      ]),
    ],
    [
      'a relative :path',
      block([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', 'x'],
      ]),
    ],
    ['a name with a space', request('/', [['x y', 'v']])],
    ['an upper-case name', request('/', [['X', 'v']])],
    ['a value with CR LF', request('/', [['x', 'a\r\nb: c']])],
    ['a value with NUL', request('/', [['x', 'a\0b']])],
    ['a value with leading whitespace', request('/', [['x', ' v']])],
    ['a value with trailing whitespace', request('/', [['x', 'v\t']])],
    ['a content-length that is not a number', request('/', [['content-length', '1x']])],
    ['content-length above 0 with END_STREAM on HEADERS', request('/', [['content-length', '3']])],
  ];
  it.each(malformed)('%s', async (_, headers) => {
    const client = open();
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, headers));
    expect(await client.reset(1)).toBe(PROTOCOL_ERROR);
    await client.roundTrip();
    expect(client.frames.some((f) => f.type === T.HEADERS && f.stream === 1)).toBe(false);
    // The connection serves on.
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 3, request()));
    expect((await client.answered(3)).type).toBe(T.HEADERS);
  });

  it('DATA past content-length, and END_STREAM short of it', async () => {
    const client = open();
    client.send(
      frame(T.HEADERS, END_HEADERS, 1, request('/', [['content-length', '2']])),
      frame(T.DATA, END_STREAM, 1, Buffer.from('abc')),
      frame(T.HEADERS, END_HEADERS, 3, request('/', [['content-length', '4']])),
      frame(T.DATA, 0, 3, Buffer.from('ab')),
      frame(T.DATA, END_STREAM, 3, Buffer.from('c')),
    );
    expect(await client.reset(1)).toBe(PROTOCOL_ERROR);
    expect(await client.reset(3)).toBe(PROTOCOL_ERROR);
    client.send(
      frame(T.HEADERS, END_HEADERS, 5, request('/', [['content-length', '3']])),
      frame(T.DATA, END_STREAM, 5, Buffer.from('abc')),
    );
    expect((await client.answered(5)).type).toBe(T.HEADERS);
  });

  it('trailers with a pseudo-header or a connection-specific field', async () => {
    const client = open();
    client.send(
      frame(T.HEADERS, END_HEADERS, 1, request()),
      frame(T.HEADERS, END_HEADERS | END_STREAM, 1, block([[':path', '/']])),
      frame(T.HEADERS, END_HEADERS, 3, request()),
      frame(T.HEADERS, END_HEADERS | END_STREAM, 3, block([['connection', 'close']])),
      frame(T.HEADERS, END_HEADERS, 5, request()),
      frame(T.HEADERS, END_HEADERS, 5, block([['x', 'trailer without END_STREAM']])),
    );
    expect(await client.reset(1)).toBe(PROTOCOL_ERROR);
    expect(await client.reset(3)).toBe(PROTOCOL_ERROR);
    expect(await client.reset(5)).toBe(PROTOCOL_ERROR);
  });
});

describe('stream states and priorities (sections 5.1, 5.3, 6.3)', () => {
  it('PRIORITY on stream 0: connection error PROTOCOL_ERROR', async () => {
    const client = open();
    client.send(frame(T.PRIORITY, 0, 0, Buffer.from([0, 0, 0, 1, 16])));
    expect(await client.goaway()).toBe(PROTOCOL_ERROR);
  });

  it("a stream that depends on itself: PROTOCOL_ERROR, the connection's as nghttp2 has it", async () => {
    const byPriority = open();
    byPriority.send(frame(T.PRIORITY, 0, 1, Buffer.from([0, 0, 0, 1, 16])));
    expect(await byPriority.goaway()).toBe(PROTOCOL_ERROR);
    const inHeaders = open();
    const self = Buffer.concat([Buffer.from([0, 0, 0, 1, 16]), request()]);
    inHeaders.send(frame(T.HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, self));
    expect(await inHeaders.goaway()).toBe(PROTOCOL_ERROR);
  });

  it('HEADERS with a stream id lower than an earlier one: connection error PROTOCOL_ERROR', async () => {
    const client = open();
    client.send(frame(T.HEADERS, END_HEADERS, 5, request('/hold')));
    client.send(frame(T.HEADERS, END_HEADERS, 3, request('/hold')));
    expect(await client.goaway()).toBe(PROTOCOL_ERROR);
  });

  it('DATA after the client ended the stream, answered or not: STREAM_CLOSED', async () => {
    const client = open();
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request('/hold')));
    client.send(frame(T.DATA, END_STREAM, 1, Buffer.from('late')));
    expect(await client.reset(1)).toBe(STREAM_CLOSED);
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 3, request()));
    await client.answered(3);
    client.send(frame(T.DATA, END_STREAM, 3, Buffer.from('late')));
    expect(await client.reset(3)).toBe(STREAM_CLOSED);
  });

  it('frames on a stream this side reset are ignored', async () => {
    const client = open();
    // The echo server's connection allows 4 streams: the fifth is refused.
    for (let id = 1; id <= 9; id += 2)
      client.send(frame(T.HEADERS, END_HEADERS, id, request('/hold')));
    expect(await client.reset(9)).toBe(0x7);
    client.send(
      frame(T.DATA, END_STREAM, 9, Buffer.from('x')),
      frame(T.HEADERS, END_HEADERS | END_STREAM, 9, block([['x', 'y']])),
    );
    await client.roundTrip();
    expect(
      client.frames.filter((f) => f.type === T.RST_STREAM || f.type === T.GOAWAY),
    ).toHaveLength(1);
  });
});

describe('HPACK (RFC 7541)', () => {
  it('two dynamic table size updates open a block', async () => {
    const client = open();
    const updates = Buffer.from([0x20, 0x3f, 0xe1, 0x1f]); // size 0, then 4096
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, Buffer.concat([updates, request()])));
    expect((await client.answered(1)).type).toBe(T.HEADERS);
  });

  it('a size update after a field: COMPRESSION_ERROR', async () => {
    const client = open();
    const late = Buffer.concat([request(), Buffer.from([0x20])]);
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, late));
    expect(await client.goaway()).toBe(0x9);
  });

  it('a client that lowers its header table size gets a size update first', async () => {
    const client = new RawClient(
      served.port,
      Buffer.concat([
        Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'),
        frame(T.SETTINGS, 0, 0, settings([0x1, 0])),
      ]),
    );
    clients.push(client);
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()));
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 3, request()));
    const first = await client.next((f) => f.type === T.HEADERS && f.stream === 1);
    expect(first.payload[0]).toBe(0x20);
    const second = await client.next((f) => f.type === T.HEADERS && f.stream === 3);
    expect(second.payload[0]).not.toBe(0x20);
  });

  it('node:http2 with a header table size of 0 reads every answer', async () => {
    const session = http2.connect(`http://127.0.0.1:${String(served.port)}`, {
      settings: { headerTableSize: 0 },
    });
    session.on('error', () => undefined);
    for (let i = 0; i < 3; i++) {
      const stream = session.request({ ':method': 'POST', ':path': '/', 'reply-bytes': 3 });
      const status = await new Promise<number | undefined>((resolve, reject) => {
        stream.on('response', (h) => {
          resolve(h[':status']);
        });
        stream.on('error', reject);
        stream.end();
      });
      expect(status).toBe(200);
    }
    session.close();
  });
});

describe('requests that are not gRPC calls: answered once the client has sent them', () => {
  let listener: net.Server;
  let port: number;
  beforeEach(async () => {
    listener = net.createServer();
    const route = routeCalls(new Map(), new LastResort(new StatsStore(), new MemoryLogger()));
    acceptH2(
      listener,
      false,
      { maxConcurrentStreams: 10, maxHeaderListBytes: 16384 },
      {
        session: () => undefined,
        stream: route,
      },
    );
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.destroy();
    await new Promise((resolve) => listener.close(resolve));
  });

  it('405 for GET and 415 without a gRPC content type, after END_STREAM, with a body', async () => {
    const client = open(port);
    const get = block([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
    ]);
    client.send(frame(T.HEADERS, END_HEADERS, 1, get), frame(T.HEADERS, END_HEADERS, 3, request()));
    await client.roundTrip();
    expect(client.frames.filter((f) => f.stream !== 0)).toEqual([]);
    // Still open: its frames are taken as the RFC says (HEADERS again without END_STREAM).
    client.send(frame(T.HEADERS, END_HEADERS, 1, block([['x', 'y']])));
    expect(await client.reset(1)).toBe(PROTOCOL_ERROR);
    client.send(frame(T.DATA, END_STREAM, 3, Buffer.from('x')));
    const answer = await client.next((f) => f.type === T.HEADERS && f.stream === 3);
    expect(answer.payload.toString('latin1')).toContain('415');
    const body = await client.next((f) => f.type === T.DATA && f.stream === 3);
    expect(body.payload.length).toBeGreaterThan(0);
    await client.answered(3);
    await client.roundTrip();
    expect(client.frames.some((f) => f.type === T.RST_STREAM && f.stream === 3)).toBe(false);
  });

  it('an answer given at once to a whole request: nothing sent on the closed stream', async () => {
    const client = open(port);
    const call = request('/no.Such/Method', [['content-type', 'application/grpc']]);
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, call));
    await client.answered(1);
    await client.roundTrip();
    expect(client.frames.filter((f) => f.type === T.RST_STREAM)).toEqual([]);
  });
});
