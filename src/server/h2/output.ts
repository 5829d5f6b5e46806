// One connection's outgoing bytes. Frames are written into a shared buffer as they are made and
// leave in one socket write per turn of the event loop: answers completed together (a Redis
// pipeline's replies, a batch of requests read from one chunk) cost one write, not three each.
import type net from 'node:net';
import { FRAME_HEADER_BYTES } from './frames';

const CHUNK_BYTES = 16 * 1024;
/**
 * A connection starts with room for its SETTINGS and first answers, cut from Node's shared
 * Buffer pool; it grows to CHUNK_BYTES once it writes more. A 16 KiB buffer of its own made
 * each connection cost 16 KiB of memory V8 counts as external, which a flood of connections
 * turned into full collections.
 */
const FIRST_BYTES = 1024;

export class Output {
  private buf = Buffer.allocUnsafe(FIRST_BYTES);
  /** Where the bytes not yet handed to the socket start. */
  private start = 0;
  private used = 0;

  constructor(private readonly socket: net.Socket) {}

  get pendingBytes(): number {
    return this.used - this.start;
  }

  /** Writes one frame: its header, then `payload[from, to)` when given. */
  frame(
    type: number,
    flags: number,
    stream: number,
    payload?: Buffer,
    from = 0,
    to?: number,
  ): void {
    const end = to ?? payload?.length ?? 0;
    const length = payload === undefined ? 0 : end - from;
    this.header(length, type, flags, stream);
    if (payload !== undefined) this.used += payload.copy(this.buf, this.used, from, end);
  }

  /** A frame whose payload is 32-bit words (WINDOW_UPDATE, RST_STREAM, GOAWAY). */
  frameOfWords(type: number, stream: number, ...words: number[]): void {
    this.header(4 * words.length, type, 0, stream);
    for (const word of words) {
      this.buf.writeUInt32BE(word, this.used);
      this.used += 4;
    }
  }

  /** Hands what was written to the socket. */
  flush(): boolean {
    if (this.used === this.start) return true;
    const chunk = this.buf.subarray(this.start, this.used);
    this.start = this.used;
    return this.socket.write(chunk);
  }

  /** Writes a frame header with room for its payload behind it. */
  private header(length: number, type: number, flags: number, stream: number): void {
    this.reserve(FRAME_HEADER_BYTES + length);
    const { buf } = this;
    const at = this.used;
    buf[at] = (length >>> 16) & 0xff;
    buf[at + 1] = (length >>> 8) & 0xff;
    buf[at + 2] = length & 0xff;
    buf[at + 3] = type;
    buf[at + 4] = flags;
    buf.writeUInt32BE(stream, at + 5);
    this.used = at + FRAME_HEADER_BYTES;
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buf.length) return;
    // The unflushed tail moves to a new buffer; the flushed part belongs to the socket now.
    const next = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, this.used - this.start + bytes));
    this.buf.copy(next, 0, this.start, this.used);
    this.used -= this.start;
    this.start = 0;
    this.buf = next;
  }
}
