// A gRPC client speaking raw HTTP/2 frames. Node's own http2 client costs about as much CPU
// per call as the server under test, so a load generator built on it saturates its core
// before the server does. This one writes precomputed frames and never decodes HPACK: a
// unary answer is judged by its DATA frame (a success always carries the message, an error
// never does) and by the overall_code field read from that message.
import net from 'node:net';
import {
  clientOpening,
  connectionCredit,
  DEFAULT_WINDOW,
  FLAG,
  frameHeader,
  FrameSplitter,
  RECEIVE_WINDOW,
  TYPE,
  unpadded,
} from './h2-frames';

export { frameHeader } from './h2-frames';

/** How a call ended, as the load generator counts it. */
export type Outcome = 'OK' | 'OVER_LIMIT' | 'UNKNOWN' | 'grpc-error' | 'stream-reset' | 'closed';

/** HPACK string literal without Huffman coding; every string here is under 127 bytes. */
function literal(value: string): Buffer {
  const bytes = Buffer.from(value, 'latin1');
  if (bytes.length >= 127) throw new Error(`header too long for this encoder: ${value}`);
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/**
 * The request header block. Only static-table references and literals "without indexing"
 * are used, so the block never touches the dynamic table and is the same for every call.
 */
export function requestHeaderBlock(authority: string, path: string, grpcTimeout?: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x83]), // :method POST
    Buffer.from([0x86]), // :scheme http
    Buffer.from([0x04]), // :path, name from the static table
    literal(path),
    Buffer.from([0x01]), // :authority
    literal(authority),
    Buffer.from([0x0f, 0x10]), // content-type (static index 31)
    literal('application/grpc'),
    Buffer.from([0x00]), // te, a new name
    literal('te'),
    literal('trailers'),
    ...(grpcTimeout === undefined
      ? []
      : [Buffer.from([0x00]), literal('grpc-timeout'), literal(grpcTimeout)]),
  ]);
}

/** Reads overall_code (field 1, a varint) from a RateLimitResponse. */
export function overallCode(message: Buffer): Outcome {
  let offset = 0;
  while (offset < message.length) {
    const tag = message[offset++] ?? 0;
    const field = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) {
      let value = 0;
      let shift = 0;
      for (;;) {
        const byte = message[offset++] ?? 0;
        value += (byte & 0x7f) * 2 ** shift;
        shift += 7;
        if ((byte & 0x80) === 0) break;
      }
      if (field === 1) return value === 1 ? 'OK' : value === 2 ? 'OVER_LIMIT' : 'UNKNOWN';
    } else if (wire === 2) {
      let length = 0;
      let shift = 0;
      for (;;) {
        const byte = message[offset++] ?? 0;
        length += (byte & 0x7f) * 2 ** shift;
        shift += 7;
        if ((byte & 0x80) === 0) break;
      }
      offset += length;
    } else if (wire === 5) offset += 4;
    else if (wire === 1) offset += 8;
    else break;
  }
  return 'UNKNOWN';
}

interface Pending {
  readonly done: (outcome: Outcome) => void;
  message: Buffer | undefined;
}

/** One HTTP/2 connection carrying unary gRPC calls. */
export class RawGrpcConnection {
  private readonly socket: net.Socket;
  private readonly headerBlock: Buffer;
  private readonly pending = new Map<number, Pending>();
  private nextStream = 1;
  private sendWindow = DEFAULT_WINDOW;
  private readonly queued: { frames: Buffer; size: number }[] = [];
  private readonly frames = new FrameSplitter((type, flags, stream, payload) => {
    this.onFrame(type, flags, stream, payload);
  });
  private received = 0;
  private isClosed = false;

  constructor(host: string, port: number, path: string, grpcTimeout?: string) {
    this.headerBlock = requestHeaderBlock(`${host}:${String(port)}`, path, grpcTimeout);
    this.socket = net.connect({ host, port, noDelay: true });
    this.socket.write(clientOpening());
    this.socket.on('data', (chunk: Buffer) => {
      this.onData(chunk);
    });
    this.socket.on('error', () => {
      this.fail();
    });
    this.socket.on('close', () => {
      this.fail();
    });
  }

  /** Sends one framed gRPC message (the five-byte prefix included). */
  call(framedMessage: Buffer, done: (outcome: Outcome) => void): void {
    if (this.isClosed) {
      done('closed');
      return;
    }
    const stream = this.nextStream;
    this.nextStream += 2;
    this.pending.set(stream, { done, message: undefined });
    const frames = Buffer.concat([
      frameHeader(this.headerBlock.length, TYPE.HEADERS, FLAG.END_HEADERS, stream),
      this.headerBlock,
      frameHeader(framedMessage.length, TYPE.DATA, FLAG.END_STREAM, stream),
      framedMessage,
    ]);
    if (this.queued.length > 0 || framedMessage.length > this.sendWindow) {
      this.queued.push({ frames, size: framedMessage.length });
      return;
    }
    this.sendWindow -= framedMessage.length;
    this.socket.write(frames);
  }

  close(): void {
    this.isClosed = true;
    this.socket.destroy();
  }

  private fail(): void {
    this.isClosed = true;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.done('closed');
  }

  private flushQueued(): void {
    while (this.queued.length > 0) {
      const head = this.queued[0];
      if (head === undefined || head.size > this.sendWindow) return;
      this.queued.shift();
      this.sendWindow -= head.size;
      this.socket.write(head.frames);
    }
  }

  private onData(chunk: Buffer): void {
    // Calls issued while answers are handled leave in one write, as a proxy's would.
    this.socket.cork();
    try {
      this.frames.read(chunk);
    } finally {
      this.socket.uncork();
    }
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    switch (type) {
      case TYPE.DATA: {
        this.received += payload.length;
        if (this.received > RECEIVE_WINDOW / 2) {
          this.socket.write(connectionCredit(this.received));
          this.received = 0;
        }
        const p = this.pending.get(stream);
        if (p !== undefined) {
          const data = unpadded(flags, payload);
          p.message = p.message === undefined ? data : Buffer.concat([p.message, data]);
        }
        if ((flags & FLAG.END_STREAM) !== 0) this.finish(stream);
        return;
      }
      case TYPE.HEADERS:
        if ((flags & FLAG.END_STREAM) !== 0) this.finish(stream);
        return;
      case TYPE.RST_STREAM: {
        const p = this.pending.get(stream);
        this.pending.delete(stream);
        p?.done('stream-reset');
        return;
      }
      case TYPE.SETTINGS:
        // The server's settings need only an acknowledgement: every request is far smaller
        // than any initial stream window, and no header block is ever decoded.
        if ((flags & FLAG.ACK) === 0) this.socket.write(frameHeader(0, TYPE.SETTINGS, FLAG.ACK, 0));
        return;
      case TYPE.PING:
        if ((flags & FLAG.ACK) === 0)
          this.socket.write(Buffer.concat([frameHeader(8, TYPE.PING, FLAG.ACK, 0), payload]));
        return;
      case TYPE.WINDOW_UPDATE:
        if (stream === 0) {
          this.sendWindow += payload.readUInt32BE(0) & 0x7fffffff;
          this.flushQueued();
        }
        return;
      case TYPE.GOAWAY:
        this.close();
        this.fail();
        return;
      default:
        return;
    }
  }

  private finish(stream: number): void {
    const p = this.pending.get(stream);
    if (p === undefined) return;
    this.pending.delete(stream);
    // A gRPC success always carries its message; a call without one ended in an error status.
    p.done(p.message === undefined ? 'grpc-error' : overallCode(p.message.subarray(5)));
  }
}
