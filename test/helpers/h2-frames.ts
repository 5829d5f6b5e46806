// Raw HTTP/2 frames for tests of what a well-behaved client never sends: a frame builder, HPACK
// blocks of literals, and a socket client that records every frame the server answers with.
import net from 'node:net';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const T = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
export const END_STREAM = 0x1;
export const ACK = 0x1;
export const END_HEADERS = 0x4;
export const PADDED = 0x8;
export const PRIORITY_FLAG = 0x20;

export interface Frame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

export function frame(
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

export function words(...values: number[]): Buffer {
  const buf = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => buf.writeUInt32BE(value, 4 * i));
  return buf;
}

/** SETTINGS entries: pairs of id and value. */
export function settings(...pairs: (readonly [number, number])[]): Buffer {
  const buf = Buffer.alloc(6 * pairs.length);
  pairs.forEach(([id, value], i) => {
    buf.writeUInt16BE(id, 6 * i);
    buf.writeUInt32BE(value, 6 * i + 2);
  });
  return buf;
}

function hpackString(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  if (bytes.length >= 127) throw new Error('hpackString takes short strings only');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** A header block of literals without indexing (new names), in the order given. */
export function block(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.concat(
    fields.map(([name, value]) =>
      Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]),
    ),
  );
}

/** The pseudo-headers of a valid POST to `path`. */
export function request(path = '/', extra: readonly (readonly [string, string])[] = []): Buffer {
  return block([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', path],
    [':authority', 'localhost'],
    ...extra,
  ]);
}

/** A raw connection that records every frame the server sends, until it closes. */
export class RawClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<void>;
  private readonly socket: net.Socket;
  private pending = Buffer.alloc(0);
  private waiters: (() => void)[] = [];

  constructor(port: number, opening: Buffer = Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)])) {
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
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      this.socket.once('close', () => {
        this.wake();
        resolve();
      });
    });
    this.socket.write(opening);
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  send(...frames: Buffer[]): void {
    if (!this.socket.destroyed) this.socket.write(Buffer.concat(frames));
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
    const goaway = await this.next((f) => f.type === T.GOAWAY);
    return goaway.payload.readUInt32BE(4);
  }

  async reset(stream: number): Promise<number> {
    const rst = await this.next((f) => f.type === T.RST_STREAM && f.stream === stream);
    return rst.payload.readUInt32BE(0);
  }

  /** The frame that ended the stream's answer: HEADERS or DATA with END_STREAM. */
  answered(stream: number): Promise<Frame> {
    return this.next((f) => f.stream === stream && (f.flags & END_STREAM) !== 0);
  }

  /** Sends a PING and waits for its ACK: every frame sent before it has been handled. */
  async roundTrip(): Promise<void> {
    const opaque = Buffer.from(Math.random().toString(36).slice(2, 10).padEnd(8, '0'));
    this.send(frame(T.PING, 0, 0, opaque));
    await this.next((f) => f.type === T.PING && (f.flags & ACK) !== 0 && f.payload.equals(opaque));
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
