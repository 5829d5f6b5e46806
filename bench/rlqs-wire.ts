// A raw HTTP/2 client of StreamRateLimitQuotas for the bench: long-lived streams on one
// connection, report messages written as DATA within the flow control windows, a PING after a
// round of reports to learn when the server has read them (the service's HTTP/2 handles a
// connection's frames in order, and hands each DATA frame to its stream before the next), and
// the server's responses split into gRPC messages per stream. No HPACK is decoded: a stream that
// gets HEADERS with END_STREAM, or RST_STREAM, has ended.
import net from 'node:net';
import {
  clientOpening,
  connectionCredit,
  DEFAULT_WINDOW,
  FLAG,
  frameHeader,
  FrameSplitter,
  RECEIVE_WINDOW,
  SETTING,
  TYPE,
  unpadded,
} from './h2-frames';
import { requestHeaderBlock } from './h2-raw';

const DEFAULT_MAX_FRAME = 16_384;
const PING_PAYLOAD = Buffer.from('rlqsload', 'latin1');

/** The full method name of the RLQS stream. */
export const RLQS_PATH =
  '/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';

export interface RlqsConnectionEvents {
  /** One gRPC message (without its 5-byte prefix) of a response on stream `index`. */
  message(index: number, message: Buffer): void;
  /** Stream `index` ended: trailers, a reset, or its connection gone. */
  ended(index: number, why: string): void;
  /** A PING sent by ping() came back. */
  pong(): void;
}

/** A write waiting for window: DATA of one stream, or a PING (index -1) behind it. */
interface Queued {
  readonly index: number;
  readonly frames: Buffer;
  readonly size: number;
}

/** One gRPC message in its 5-byte frame. */
export function grpcFrame(message: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** `streams` StreamRateLimitQuotas calls on one HTTP/2 connection, indexed from 0. */
export class RlqsConnection {
  private readonly socket: net.Socket;
  private readonly partial: Buffer[];
  private readonly sendWindows: number[];
  private readonly isEnded: boolean[];
  private connectionWindow = DEFAULT_WINDOW;
  private maxFrame = DEFAULT_MAX_FRAME;
  private initialWindow = DEFAULT_WINDOW;
  private readonly queued: Queued[] = [];
  private readonly frames = new FrameSplitter((type, flags, stream, payload) => {
    this.onFrame(type, flags, stream, payload);
  });
  private received = 0;
  private isClosed = false;

  constructor(
    host: string,
    port: number,
    readonly streams: number,
    private readonly events: RlqsConnectionEvents,
  ) {
    this.partial = Array.from({ length: streams }, () => Buffer.alloc(0));
    this.sendWindows = Array.from({ length: streams }, () => DEFAULT_WINDOW);
    this.isEnded = Array.from({ length: streams }, () => false);
    this.socket = net.connect({ host, port, noDelay: true });
    const block = requestHeaderBlock(`${host}:${String(port)}`, RLQS_PATH);
    const opens = Array.from({ length: streams }, (_, i) => [
      frameHeader(block.length, TYPE.HEADERS, FLAG.END_HEADERS, RlqsConnection.idOf(i)),
      block,
    ]).flat();
    this.socket.write(Buffer.concat([clientOpening(), ...opens]));
    this.socket.on('data', (chunk: Buffer) => {
      this.readFrames(chunk);
    });
    this.socket.on('error', () => {
      this.fail('connection error');
    });
    this.socket.on('close', () => {
      this.fail('connection closed');
    });
  }

  private static idOf(index: number): number {
    return 2 * index + 1;
  }

  /** Whether stream `index` has ended. */
  ended(index: number): boolean {
    return this.isEnded[index] ?? true;
  }

  /** Writes the calls of `write` in one go (one socket write when the windows allow). */
  batch(write: () => void): void {
    this.socket.cork();
    try {
      write();
    } finally {
      this.socket.uncork();
    }
  }

  /** Sends one framed gRPC message on stream `index`; false when the stream is over. */
  send(index: number, framed: Buffer): boolean {
    if (this.isClosed || this.ended(index)) return false;
    const id = RlqsConnection.idOf(index);
    const parts: Buffer[] = [];
    for (let at = 0; at < framed.length; at += this.maxFrame) {
      const piece = framed.subarray(at, Math.min(framed.length, at + this.maxFrame));
      parts.push(frameHeader(piece.length, TYPE.DATA, 0, id), piece);
    }
    this.write({ index, frames: Buffer.concat(parts), size: framed.length });
    return true;
  }

  /** Sends a PING behind everything sent so far; events.pong() when it comes back. */
  ping(): void {
    if (this.isClosed) return;
    this.write({
      index: -1,
      frames: Buffer.concat([frameHeader(8, TYPE.PING, 0, 0), PING_PAYLOAD]),
      size: 0,
    });
  }

  /** Writes still waiting for window. */
  get queuedWrites(): number {
    return this.queued.length;
  }

  close(): void {
    this.isClosed = true;
    this.socket.destroy();
  }

  private fits(item: Queued): boolean {
    if (item.index < 0) return true;
    return item.size <= this.connectionWindow && item.size <= (this.sendWindows[item.index] ?? 0);
  }

  private write(item: Queued): void {
    if (this.queued.length > 0 || !this.fits(item)) {
      this.queued.push(item);
      return;
    }
    this.take(item);
  }

  private take(item: Queued): void {
    if (item.index >= 0) {
      this.connectionWindow -= item.size;
      this.sendWindows[item.index] = (this.sendWindows[item.index] ?? 0) - item.size;
    }
    this.socket.write(item.frames);
  }

  private flushQueued(): void {
    while (this.queued.length > 0) {
      const head = this.queued[0];
      if (head === undefined || !this.fits(head)) return;
      this.queued.shift();
      if (head.index >= 0 && this.ended(head.index)) continue;
      this.take(head);
    }
  }

  private fail(why: string): void {
    this.isClosed = true;
    for (let i = 0; i < this.streams; i++) this.end(i, why);
  }

  private end(index: number, why: string): void {
    if (this.isEnded[index] !== false) return;
    this.isEnded[index] = true;
    this.events.ended(index, why);
  }

  private readFrames(chunk: Buffer): void {
    this.socket.cork();
    try {
      this.frames.read(chunk);
    } finally {
      this.socket.uncork();
    }
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    const index = (stream - 1) / 2;
    switch (type) {
      case TYPE.DATA:
        this.onData(index, flags, payload);
        return;
      case TYPE.HEADERS:
        if ((flags & FLAG.END_STREAM) !== 0) this.end(index, 'the server ended the stream');
        return;
      case TYPE.RST_STREAM:
        this.end(index, `reset with code ${String(payload.readUInt32BE(0))}`);
        return;
      case TYPE.SETTINGS:
        if ((flags & FLAG.ACK) === 0) this.onSettings(payload);
        return;
      case TYPE.PING:
        if ((flags & FLAG.ACK) === 0)
          this.socket.write(Buffer.concat([frameHeader(8, TYPE.PING, FLAG.ACK, 0), payload]));
        else if (payload.equals(PING_PAYLOAD)) this.events.pong();
        return;
      case TYPE.WINDOW_UPDATE: {
        const increment = payload.readUInt32BE(0) & 0x7fffffff;
        if (stream === 0) this.connectionWindow += increment;
        else if (this.sendWindows[index] !== undefined)
          this.sendWindows[index] = (this.sendWindows[index] ?? 0) + increment;
        this.flushQueued();
        return;
      }
      case TYPE.GOAWAY:
        this.fail(`GOAWAY with code ${String(payload.readUInt32BE(4))}`);
        this.close();
        return;
      default:
        return;
    }
  }

  private onSettings(payload: Buffer): void {
    for (let at = 0; at + 6 <= payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTING.INITIAL_WINDOW_SIZE) {
        const delta = value - this.initialWindow;
        this.initialWindow = value;
        for (let i = 0; i < this.streams; i++)
          this.sendWindows[i] = (this.sendWindows[i] ?? 0) + delta;
      } else if (id === SETTING.MAX_FRAME_SIZE) this.maxFrame = value;
    }
    this.socket.write(frameHeader(0, TYPE.SETTINGS, FLAG.ACK, 0));
    this.flushQueued();
  }

  private onData(index: number, flags: number, payload: Buffer): void {
    this.received += payload.length;
    if (this.received > RECEIVE_WINDOW / 2) {
      this.socket.write(connectionCredit(this.received));
      this.received = 0;
    }
    const data = unpadded(flags, payload);
    const before = this.partial[index];
    if (before === undefined) return;
    let pending = before.length === 0 ? data : Buffer.concat([before, data]);
    while (pending.length >= 5) {
      const length = pending.readUInt32BE(1);
      if (pending.length < 5 + length) break;
      this.events.message(index, pending.subarray(5, 5 + length));
      pending = pending.subarray(5 + length);
    }
    this.partial[index] = Buffer.from(pending);
    if ((flags & FLAG.END_STREAM) !== 0) this.end(index, 'the server ended the stream');
  }
}
