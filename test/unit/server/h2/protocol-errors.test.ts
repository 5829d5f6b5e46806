// What a well-behaved client never sends, as raw frames: each ends the stream or the
// connection with the code RFC 9113 names, and nothing else is disturbed.
import net from 'node:net';
import { serveEcho, type Served } from '../../../helpers/h2-echo';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const DATA = 0;
const HEADERS = 1;
const RST_STREAM = 3;
const SETTINGS = 4;
const PING = 6;
const GOAWAY = 7;
const WINDOW_UPDATE = 8;
const CONTINUATION = 9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;

/** :method POST, :scheme http, :path / — static table references only. */
const REQUEST = Buffer.from([0x83, 0x86, 0x84]);
/** The same with :path /hold: the echo server never answers it. */
const HOLD = Buffer.concat([Buffer.from([0x83, 0x86, 0x04, 0x05]), Buffer.from('/hold')]);

interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

function frame(
  type: number,
  flags: number,
  stream: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

function word(value: number): Buffer {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(value, 0);
  return buf;
}

/** A raw connection that records every frame the server sends, until it closes. */
class RawClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<void>;
  private readonly socket: net.Socket;
  private pending = Buffer.alloc(0);
  private waiters: (() => void)[] = [];

  constructor(port: number, opening: Buffer = Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)])) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 9) {
        const length = this.pending.readUIntBE(0, 3);
        if (this.pending.length < 9 + length) break;
        this.frames.push({
          type: this.pending[3] ?? -1,
          flags: this.pending[4] ?? -1,
          stream: this.pending.readUInt32BE(5),
          payload: this.pending.subarray(9, 9 + length),
        });
        this.pending = this.pending.subarray(9 + length);
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => {
      this.socket.once('close', () => {
        for (const wake of this.waiters.splice(0)) wake();
        resolve();
      });
    });
    this.socket.write(opening);
  }

  send(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  /** The first frame the server sent that matches; rejects if the connection closes first. */
  async next(match: (f: Frame) => boolean): Promise<Frame> {
    for (;;) {
      const found = this.frames.find(match);
      if (found !== undefined) return found;
      if (this.socket.destroyed) throw new Error('closed without the expected frame');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** The GOAWAY's error code. */
  async goaway(): Promise<number> {
    const goaway = await this.next((f) => f.type === GOAWAY);
    return goaway.payload.readUInt32BE(4);
  }

  async reset(stream: number): Promise<number> {
    const rst = await this.next((f) => f.type === RST_STREAM && f.stream === stream);
    return rst.payload.readUInt32BE(0);
  }

  /** The frame that ended the stream's answer: its trailers, HEADERS with END_STREAM. */
  answered(stream: number): Promise<Frame> {
    return this.next((f) => f.stream === stream && (f.flags & END_STREAM) !== 0);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

let served: Served;
const clients: RawClient[] = [];
function open(opening?: Buffer): RawClient {
  const client = new RawClient(served.port, opening);
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

describe('connection errors: GOAWAY with the code, then the connection ends', () => {
  it('bytes that are not the preface', async () => {
    const client = open(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(await client.goaway()).toBe(0x1); // PROTOCOL_ERROR
    await client.closed;
  });

  it('a first frame that is not SETTINGS', async () => {
    const client = open(Buffer.concat([PREFACE, frame(PING, 0, 0, Buffer.alloc(8))]));
    expect(await client.goaway()).toBe(0x1);
    await client.closed;
  });

  it('a frame larger than SETTINGS_MAX_FRAME_SIZE', async () => {
    const client = open();
    client.send(frame(HEADERS, END_HEADERS, 1, Buffer.alloc(16_385)));
    expect(await client.goaway()).toBe(0x6); // FRAME_SIZE_ERROR
    await client.closed;
  });

  it('a header block HPACK cannot decode', async () => {
    const client = open();
    client.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, Buffer.from([0x80])));
    expect(await client.goaway()).toBe(0x9); // COMPRESSION_ERROR
    await client.closed;
  });

  it('DATA on a stream never opened, and a header block interrupted', async () => {
    const first = open();
    first.send(frame(DATA, 0, 7, Buffer.alloc(3)));
    expect(await first.goaway()).toBe(0x1);
    const second = open();
    second.send(frame(HEADERS, 0, 1, REQUEST), frame(PING, 0, 0, Buffer.alloc(8)));
    expect(await second.goaway()).toBe(0x1);
    const third = open();
    third.send(frame(CONTINUATION, END_HEADERS, 1, REQUEST));
    expect(await third.goaway()).toBe(0x1);
  });

  it('a connection window pushed past 2^31-1', async () => {
    const client = open();
    client.send(frame(WINDOW_UPDATE, 0, 0, word(0x7fffffff)));
    expect(await client.goaway()).toBe(0x3); // FLOW_CONTROL_ERROR
  });

  it('streams reset faster than allowed (rapid reset): ENHANCE_YOUR_CALM', async () => {
    const client = open();
    const burst: Buffer[] = [];
    for (let id = 1; id < 2 * 1100; id += 2) {
      burst.push(frame(HEADERS, END_HEADERS, id, HOLD), frame(RST_STREAM, 0, id, word(0x8)));
    }
    client.send(...burst);
    expect(await client.goaway()).toBe(0xb);
    await client.closed;
  });

  it('an exception a handler throws: INTERNAL_ERROR, and the session emits it', async () => {
    const client = open();
    const path = Buffer.concat([Buffer.from([0x83, 0x86, 0x04, 0x06]), Buffer.from('/throw')]);
    client.send(frame(HEADERS, END_HEADERS, 1, path), frame(DATA, END_STREAM, 1, Buffer.alloc(1)));
    expect(await client.goaway()).toBe(0x2);
    await client.closed;
    expect(served.errors).toEqual([new Error('a handler bug')]);
  });
});

describe('stream errors: RST_STREAM, and the connection serves on', () => {
  it('a malformed request (an upper-case header name): PROTOCOL_ERROR', async () => {
    const client = open();
    const upper = Buffer.concat([REQUEST, Buffer.from([0x00, 0x01, 0x58, 0x01, 0x79])]); // X: y
    client.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, upper));
    expect(await client.reset(1)).toBe(0x1);
    client.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, REQUEST));
    expect((await client.answered(3)).type).toBe(HEADERS);
  });

  it('streams past SETTINGS_MAX_CONCURRENT_STREAMS: REFUSED_STREAM', async () => {
    const client = open();
    for (let id = 1; id <= 9; id += 2) client.send(frame(HEADERS, END_HEADERS, id, HOLD));
    expect(await client.reset(9)).toBe(0x7);
    expect(client.frames.some((f) => f.type === RST_STREAM && f.stream < 9)).toBe(false);
  });

  it('a header list over SETTINGS_MAX_HEADER_LIST_SIZE: answered 431', async () => {
    const client = open();
    // x: a value of 20,000 bytes (its length as a 7-bit-prefix integer: 127 + 33 + 27·128 +
    // 1·16384), split over HEADERS and CONTINUATION; the echo server allows 16 KiB.
    const length = Buffer.from([0x7f, 0xa1, 0x9b, 0x01]);
    const value = Buffer.alloc(20_000, 0x61);
    const block = Buffer.concat([REQUEST, Buffer.from([0x00, 0x01, 0x78]), length, value]);
    client.send(
      frame(HEADERS, END_STREAM, 1, block.subarray(0, 16_000)),
      frame(CONTINUATION, END_HEADERS, 1, block.subarray(16_000)),
    );
    const answer = await client.next((f) => f.type === HEADERS && f.stream === 1);
    expect(answer.payload.toString('latin1')).toContain('431');
    client.send(frame(HEADERS, END_HEADERS | END_STREAM, 3, REQUEST));
    expect((await client.answered(3)).type).toBe(HEADERS);
  });

  it('PING is answered with the same eight bytes', async () => {
    const client = open();
    client.send(frame(PING, 0, 0, Buffer.from('12345678')));
    const ack = await client.next((f) => f.type === PING && f.flags === 1);
    expect(ack.payload.toString()).toBe('12345678');
  });
});
