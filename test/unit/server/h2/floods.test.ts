// Floods that cost the server more than the client unless bounded: each is cut (GOAWAY
// ENHANCE_YOUR_CALM, as nghttp2 cuts it) or costs what its frames cost, and memory held for
// unfinished requests stays within the buffer budget. Quick checks of the bound; the load runs
// with an innocent client are in docs/reliability.md.
import { once } from 'node:events';
import net from 'node:net';
import { BufferBudget } from '../../../../src/server/h2';
import { eventually } from '../../../helpers/eventually';
import {
  END_HEADERS,
  END_STREAM,
  frame,
  PREFACE,
  RawClient,
  request,
  T,
  words,
} from '../../../helpers/h2-frames';
import {
  ackFlood,
  blockedStreams,
  continuationFlood,
  initialWindowFlood,
  largeSettings,
  oversizedBlocks,
  unfinishedBodies,
  windowUpdateFlood,
} from '../../../helpers/h2-floods';
import { serveEcho, type Served } from '../../../helpers/h2-echo';

const ENHANCE_YOUR_CALM = 0xb;

let served: Served | undefined;
const clients: RawClient[] = [];
async function serve(maxStreams = 1000, budget?: BufferBudget): Promise<Served> {
  served = await serveEcho(maxStreams, budget);
  return served;
}
function open(port: number): RawClient {
  const client = new RawClient(port);
  clients.push(client);
  return client;
}
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await served?.close();
  served = undefined;
});

/** Milliseconds from sending `bytes` to the server having handled all of them. */
async function handlingMs(client: RawClient, bytes: Buffer): Promise<number> {
  const started = performance.now();
  client.send(bytes);
  await client.roundTrip();
  return performance.now() - started;
}

describe('flow control floods: no frame walks every stream', () => {
  it('WINDOW_UPDATE(0, +1) with 1,000 streams blocked costs what it costs with none', async () => {
    const { port } = await serve();
    const idle = open(port);
    idle.send(blockedStreams(1000, request('/', [['reply-bytes', '0']])));
    await idle.roundTrip();
    const baseline = await handlingMs(idle, windowUpdateFlood(2000));
    const busy = open(port);
    busy.send(blockedStreams(1000));
    await busy.roundTrip();
    const loaded = await handlingMs(busy, windowUpdateFlood(2000));
    expect(busy.isClosed).toBe(false);
    expect(loaded).toBeLessThan(4 * baseline + 50);
  });

  it('WINDOW_UPDATE frames for data never sent: kept, as nghttp2 keeps them', async () => {
    // Each costs what its 13 bytes cost (above), so the connection is held, not cut: a cut
    // client reconnects and opens its thousand calls again, which costs far more.
    const { port } = await serve();
    const client = open(port);
    client.send(blockedStreams(1000));
    await client.roundTrip();
    client.send(windowUpdateFlood(50_000));
    await client.roundTrip();
    expect(client.isClosed).toBe(false);
  });

  it('WINDOW_UPDATE frames that follow the DATA sent: kept', async () => {
    const { port } = await serve();
    const client = open(port);
    const calls = Array.from({ length: 100 }, (_, i) =>
      frame(T.HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, request('/', [['reply-bytes', '10']])),
    );
    client.send(...calls);
    await client.answered(199);
    // An update on the connection and one on the stream for every DATA frame received.
    const data = client.frames.filter((f) => f.type === T.DATA);
    client.send(
      ...data.flatMap((f) => [
        frame(T.WINDOW_UPDATE, 0, 0, words(1)),
        frame(T.WINDOW_UPDATE, 0, f.stream, words(1)),
      ]),
    );
    await client.roundTrip();
    expect(client.isClosed).toBe(false);
  });

  it('SETTINGS moving the initial window of 1,000 blocked streams: held, a turn a walk', async () => {
    const { port } = await serve();
    const client = open(port);
    client.send(blockedStreams(1000));
    await client.roundTrip();
    // 1,000 raises of the window, each moving 1,000 streams, in 30 KB that one turn would
    // read whole; another connection's call sent after them is answered before they are done.
    client.send(initialWindowFlood(2000), frame(T.PING, 0, 0, Buffer.from('lastlast')));
    const other = open(port);
    other.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request('/', [['reply-bytes', '0']])));
    await other.answered(1);
    const isLast = (f: { type: number; payload: Buffer }): boolean =>
      f.type === T.PING && f.payload.toString('latin1') === 'lastlast';
    expect(client.frames.some(isLast)).toBe(false);
    await client.next(isLast);
    expect(client.isClosed).toBe(false);
  });

  it('a SETTINGS frame of more than 32 entries: cut', async () => {
    const { port } = await serve();
    const client = open(port);
    client.send(largeSettings(32));
    await client.roundTrip();
    client.send(largeSettings(33));
    expect(await client.goaway()).toBe(ENHANCE_YOUR_CALM);
  });
});

describe('one connection read a turn at a time', () => {
  it('a burst of many turns is read whole and in order: every call answered, then its PING', async () => {
    const { port } = await serve();
    const client = open(port);
    // 900 calls with 1 KB bodies and a PING, in one write: about 1 MB, many turns of reading.
    const calls = Array.from({ length: 900 }, (_, i) => [
      frame(T.HEADERS, END_HEADERS, 2 * i + 1, request('/', [['reply-bytes', '1']])),
      frame(T.DATA, END_STREAM, 2 * i + 1, Buffer.alloc(1000, 0x61)),
    ]).flat();
    client.send(...calls, frame(T.PING, 0, 0, Buffer.from('lastlast')));
    await client.next((f) => f.type === T.PING && f.payload.toString('latin1') === 'lastlast');
    const ends = client.frames
      .filter((f) => f.stream !== 0 && (f.flags & END_STREAM) !== 0)
      .map((f) => f.stream);
    expect(new Set(ends).size).toBe(900);
    expect(client.isClosed).toBe(false);
  });
});

/** The error code of the first GOAWAY among the frames in `bytes`, what a server sent. */
function goawayIn(bytes: Buffer): number | undefined {
  for (let at = 0; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) {
    if (bytes[at + 3] === T.GOAWAY) return bytes.readUInt32BE(at + 13);
  }
  return undefined;
}

describe('acknowledgements a client asks for faster than it reads them: cut', () => {
  it.each(['ping', 'settings'] as const)('%s', async (kind) => {
    const { port, sessions } = await serve();
    // A client that reads nothing until the server is done with it: once the socket buffers
    // between them are full, the acknowledgements wait in the server, and 1,000 is the limit.
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => undefined);
    socket.write(Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0), ackFlood(kind, 1_000_000)]));
    try {
      await eventually(() => sessions[0]?.destroyed === true, { what: 'the connection cut' });
      // It lingers a second for this side to read what it was sent, the GOAWAY last.
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      socket.resume();
      await once(socket, 'end');
      expect(goawayIn(Buffer.concat(received))).toBe(ENHANCE_YOUR_CALM);
    } finally {
      socket.destroy();
    }
  });
});

describe('header blocks: bounded by their bytes', () => {
  it.each(['literal', 'bomb'] as const)(
    '%s past the list limit: 431 once, then the connection is cut',
    async (kind) => {
      const { port } = await serve();
      const client = open(port);
      client.send(oversizedBlocks(kind, 8, kind === 'bomb' ? 12_000 : 20_000));
      expect(await client.goaway()).toBe(ENHANCE_YOUR_CALM);
      const answers = client.frames.filter((f) => f.type === T.HEADERS);
      expect(answers.map((f) => f.payload.toString('latin1'))).toEqual([
        expect.stringContaining('431'),
      ]);
    },
  );

  it('a block in more than 8 CONTINUATION frames: cut', async () => {
    const { port } = await serve();
    const client = open(port);
    client.send(continuationFlood(8), frame(T.CONTINUATION, END_HEADERS, 1, Buffer.alloc(0)));
    expect(await client.goaway()).toBe(ENHANCE_YOUR_CALM);
    const again = open(port);
    again.send(continuationFlood(1000));
    expect(await again.goaway()).toBe(ENHANCE_YOUR_CALM);
  });
});

describe('unfinished requests: held within the buffer budget', () => {
  it('per connection and in total; refused streams may be retried; all given back', async () => {
    const budget = new BufferBudget(1024 * 1024);
    const { port } = await serve(100, budget);
    const attackers = Array.from({ length: 6 }, () => open(port));
    // 300 KB kept on each connection: more than its share (32 KiB, a thirty-second).
    for (const client of attackers) client.send(unfinishedBodies(3, 100_000));
    await Promise.all(attackers.map((client) => client.roundTrip()));
    expect(budget.heldBytes).toBeLessThanOrEqual(1024 * 1024);
    const refused = attackers.flatMap((c) => c.frames.filter((f) => f.type === T.RST_STREAM));
    expect(refused.length).toBeGreaterThanOrEqual(6);
    expect(refused.every((f) => f.payload.readUInt32BE(0) === 0x7)).toBe(true);
    // A request that finishes is still served on another connection.
    const innocent = open(port);
    innocent.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 1, request()));
    expect((await innocent.answered(1)).type).toBe(T.HEADERS);
    for (const client of attackers) client.destroy();
    await eventually(() => budget.heldBytes === 0, { what: 'the budget to be given back' });
  });
});

describe('unfinished requests: counted by what their readers keep', () => {
  it('a body nobody keeps costs nothing, however much of it is unfinished', async () => {
    const budget = new BufferBudget(1024 * 1024, 32);
    const { port } = await serve(100, budget);
    const client = open(port);
    // 600 KB of bodies on paths whose reader counts them and keeps nothing.
    client.send(unfinishedBodies(6, 100_000, request('/')));
    await client.roundTrip();
    expect(client.frames.filter((f) => f.type === T.RST_STREAM)).toEqual([]);
    expect([budget.heldBytes, budget.heldRequests]).toEqual([0, 0]);
  });

  it('a header block past the budget is decoded and its stream refused; the connection goes on', async () => {
    // One request per connection: the body held takes it, and the block would be a second.
    const budget = new BufferBudget(1024 * 1024, 32);
    const { port } = await serve(100, budget);
    const client = open(port);
    client.send(unfinishedBodies(1, 100, request('/hold')));
    await client.roundTrip();
    const split = request('/', [['x-pad', 'p'.repeat(100)]]);
    client.send(
      frame(T.HEADERS, END_STREAM, 3, split.subarray(0, 20)),
      frame(T.CONTINUATION, END_HEADERS, 3, split.subarray(20)),
    );
    expect(await client.reset(3)).toBe(0x7);
    // The HPACK table followed the block: the next request is read and answered.
    client.send(frame(T.HEADERS, END_HEADERS | END_STREAM, 5, request()));
    expect((await client.answered(5)).type).toBe(T.HEADERS);
    expect(client.frames.some((f) => f.type === T.GOAWAY)).toBe(false);
    client.destroy();
    await eventually(() => budget.heldRequests === 0, { what: 'the budget to be given back' });
  });
});

describe('streams whose body has not begun: counted as requests held', () => {
  it('hold a request each from the end of the read that opened them until the body begins or they close', async () => {
    const budget = new BufferBudget(1024 * 1024, 64);
    const { port } = await serve(1000, budget);
    const client = open(port);
    // Forty streams with HEADERS and nothing after, in one read.
    const headers = Array.from({ length: 40 }, (_, i) =>
      frame(T.HEADERS, END_HEADERS, 1 + 2 * i, request('/')),
    );
    client.send(...headers);
    await client.roundTrip();
    // Past half the total (32), the one peer holding them is past its share: the rest refused.
    expect(budget.heldRequests).toBe(32);
    const refused = client.frames.filter((f) => f.type === T.RST_STREAM);
    expect(refused.map((f) => f.stream)).toEqual(
      Array.from({ length: 8 }, (_, i) => 1 + 2 * (32 + i)),
    );
    expect(refused.every((f) => f.payload.readUInt32BE(0) === 0x7)).toBe(true);
    // A body that begins (kept or not by the reader) lets its request go; so does a reset.
    client.send(frame(T.DATA, 0, 1, Buffer.from('x')), frame(T.RST_STREAM, 0, 3, words(0x8)));
    await client.roundTrip();
    expect(budget.heldRequests).toBe(30);
    // HEADERS and the whole body in one read never count.
    client.send(
      frame(T.HEADERS, END_HEADERS, 101, request('/')),
      frame(T.DATA, END_STREAM, 101, Buffer.from('y')),
    );
    expect((await client.answered(101)).type).toBe(T.HEADERS);
    expect(budget.heldRequests).toBe(30);
    client.destroy();
    await eventually(() => budget.heldRequests === 0, { what: 'the budget to be given back' });
  });
});
