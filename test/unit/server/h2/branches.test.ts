// The connection's less travelled paths, each as raw frames: SETTINGS validation, CONTINUATION
// on the way out, trailers, DATA on a half-closed stream, the client's GOAWAY, PRIORITY and
// frame types this side does not know.
import net from 'node:net';
import { acceptH2 } from '../../../../src/server/h2';
import {
  block,
  END_HEADERS,
  END_STREAM,
  frame,
  RawClient,
  request,
  settings,
  T,
  words,
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
  served = await serveEcho(10);
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await served.close();
});

describe('SETTINGS validation (RFC 9113 section 6.5)', () => {
  it.each([
    ['ENABLE_PUSH above 1', frame(T.SETTINGS, 0, 0, settings([0x2, 2])), 0x1],
    ['INITIAL_WINDOW_SIZE above 2^31-1', frame(T.SETTINGS, 0, 0, settings([0x4, 2 ** 31])), 0x3],
    ['MAX_FRAME_SIZE below 16,384', frame(T.SETTINGS, 0, 0, settings([0x5, 16_383])), 0x1],
    ['MAX_FRAME_SIZE above 2^24-1', frame(T.SETTINGS, 0, 0, settings([0x5, 2 ** 24])), 0x1],
    ['an ACK with a payload', frame(T.SETTINGS, 0x1, 0, settings([0x3, 1])), 0x6],
    ['a length not a multiple of 6', frame(T.SETTINGS, 0, 0, Buffer.alloc(7)), 0x6],
    ['SETTINGS on a stream', frame(T.SETTINGS, 0, 1), 0x1],
  ])('%s', async (_, bad, code) => {
    const client = open();
    client.send(bad);
    expect(await client.goaway()).toBe(code);
  });

  it('unknown settings are ignored, known ones acknowledged', async () => {
    const client = open();
    client.send(frame(T.SETTINGS, 0, 0, settings([0x99, 7], [0x3, 10], [0x6, 100])));
    await client.roundTrip();
    expect(client.frames.filter((f) => f.type === T.SETTINGS && f.flags === 1)).toHaveLength(2);
  });
});

describe('streams', () => {
  it('valid trailers end the request, which is then answered', async () => {
    const client = open();
    client.send(
      frame(T.HEADERS, END_HEADERS, 1, request()),
      frame(T.DATA, 0, 1, Buffer.from('abc')),
      frame(T.HEADERS, END_HEADERS | END_STREAM, 1, block([['x-trailer', 'v']])),
    );
    const answer = await client.next((f) => f.type === T.HEADERS && f.stream === 1);
    expect(answer.payload.toString('latin1')).toContain('x-received');
    await client.answered(1);
  });

  it('DATA on a half-closed (remote) stream: STREAM_CLOSED', async () => {
    const client = open();
    client.send(
      frame(T.HEADERS, END_HEADERS, 1, request('/hold')),
      frame(T.DATA, END_STREAM, 1, Buffer.from('a')),
      frame(T.DATA, 0, 1, Buffer.from('b')),
    );
    expect(await client.reset(1)).toBe(0x5);
  });

  it('a valid PRIORITY is taken and ignored; one of the wrong length is a stream error', async () => {
    const client = open();
    client.send(
      frame(T.PRIORITY, 0, 1, Buffer.from([0, 0, 0, 0, 16])),
      frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()),
    );
    await client.answered(1);
    client.send(frame(T.PRIORITY, 0, 3, Buffer.alloc(4)));
    expect(await client.reset(3)).toBe(0x6);
  });

  it('frames of unknown types are ignored, even inside no header block', async () => {
    const client = open();
    client.send(frame(0x42, 0xff, 0, Buffer.from('x')), frame(0x42, 0, 1, Buffer.alloc(20)));
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()));
    await client.answered(1);
    expect(client.frames.some((f) => f.type === T.GOAWAY)).toBe(false);
  });

  it('WINDOW_UPDATE on a closed stream is ignored; on an idle one a connection error', async () => {
    const client = open();
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()));
    await client.answered(1);
    client.send(frame(T.WINDOW_UPDATE, 0, 1, words(10)));
    await client.roundTrip();
    client.send(frame(T.WINDOW_UPDATE, 0, 9, words(10)));
    expect(await client.goaway()).toBe(0x1);
  });
});

describe("the client's GOAWAY", () => {
  it('streams open finish, then the connection ends with a GOAWAY of NO_ERROR', async () => {
    const client = open();
    client.send(frame(T.HEADERS, END_HEADERS, 1, request()));
    client.send(frame(T.GOAWAY, 0, 0, words(0, 0)));
    const goaway = await client.next((f) => f.type === T.GOAWAY);
    expect(goaway.payload.readUInt32BE(0)).toBe(1);
    expect(goaway.payload.readUInt32BE(4)).toBe(0);
    client.send(frame(T.DATA, END_STREAM, 1, Buffer.from('x')));
    await client.answered(1);
    await client.closed;
  });

  it('a short GOAWAY: FRAME_SIZE_ERROR', async () => {
    const client = open();
    client.send(frame(T.GOAWAY, 0, 0, words(0)));
    expect(await client.goaway()).toBe(0x6);
  });
});

describe('CONTINUATION on the way out', () => {
  it('splits answer headers larger than the frame size into HEADERS and CONTINUATION', async () => {
    const listener = net.createServer();
    acceptH2(
      listener,
      false,
      { maxConcurrentStreams: 10, maxHeaderListBytes: 16384 },
      {
        session: () => undefined,
        stream: (stream) => {
          stream.respond({ ':status': 200, 'x-big': 'a'.repeat(40_000) }, { endStream: true });
        },
      },
    );
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    try {
      const client = open((listener.address() as net.AddressInfo).port);
      client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()));
      await client.next((f) => f.type === T.CONTINUATION && (f.flags & END_HEADERS) !== 0);
      const parts = client.frames.filter((f) => f.stream === 1);
      expect(parts.map((f) => [f.type, f.flags])).toEqual([
        [T.HEADERS, END_STREAM],
        [T.CONTINUATION, 0],
        [T.CONTINUATION, END_HEADERS],
      ]);
      expect(parts.reduce((sum, f) => sum + f.payload.length, 0)).toBeGreaterThan(40_000);
    } finally {
      for (const client of clients.splice(0)) client.destroy();
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});
