// Splits a streaming call's request body into its gRPC messages as the chunks arrive, each
// within MAX_REQUEST_BYTES, holding at most one unfinished message, in time linear in its bytes
// however finely it is cut.
import { HeldBytes } from '../h2';
import {
  CallError,
  GrpcStatus,
  messageTooLarge,
  uncompressed,
  type FramedMessage,
} from './protocol';

/** The length prefix: a flag byte and a 32-bit length. */
const PREFIX_BYTES = 5;

/** The messages of one request stream, in order. */
export class MessageStream {
  /**
   * The unfinished message, its bytes copied as they come: each byte is copied once (and moved
   * a bounded number of times as the store grows), where joining the held chunks again for
   * every chunk made a message sent a byte at a time cost its length squared.
   */
  private held: HeldBytes | undefined = undefined;
  /** The held message's whole framed length, once its prefix is in; 0 before. */
  private wanted = 0;
  /** A copy of the held prefix, to read its length without viewing the store. */
  private readonly prefix = Buffer.alloc(PREFIX_BYTES);

  constructor(
    private readonly encoding: string | undefined,
    private readonly maxBytes: number,
  ) {}

  /**
   * Takes a chunk of the body, valid only during the call; returns the messages it completes,
   * decompressed, to be read before the call's caller returns. Throws a CallError for a message
   * larger than the limit or a malformed frame.
   */
  push(chunk: Buffer): FramedMessage[] {
    const out: FramedMessage[] = [];
    let at = 0;
    if (this.held !== undefined) {
      at = this.fill(chunk, out);
      if (this.isCut) return out;
    }
    // Whole messages are read where they lie in the chunk: the common case copies nothing.
    while (chunk.length - at >= PREFIX_BYTES) {
      const end = at + this.framedLength(chunk, at);
      if (end > chunk.length) break;
      out.push(this.message(chunk, at, end));
      at = end;
    }
    if (at < chunk.length) this.hold(chunk.subarray(at));
    return out;
  }

  /** Bytes of the unfinished message held. */
  get heldBytes(): number {
    return this.held?.length ?? 0;
  }

  /** Whether the body ended in the middle of a message. */
  get isCut(): boolean {
    return this.held !== undefined;
  }

  /** Whether the held message's length is known. */
  private get isPrefixIn(): boolean {
    return this.wanted !== 0;
  }

  /** Lets the unfinished message go (its stream closed): its memory is the system's again. */
  release(): void {
    this.held?.release();
    this.held = undefined;
    this.wanted = 0;
  }

  /** The framed length of the message whose prefix starts at `at`, checked. */
  private framedLength(buf: Buffer, at: number): number {
    const flag = buf[at];
    if (flag !== 0 && flag !== 1)
      throw new CallError(GrpcStatus.INTERNAL, `the message flag ${String(flag)} is not 0 or 1`);
    const length = buf.readUInt32BE(at + 1);
    if (length > this.maxBytes) throw messageTooLarge(this.maxBytes);
    return PREFIX_BYTES + length;
  }

  private message(buf: Buffer, start: number, end: number): FramedMessage {
    const framed = { isCompressed: buf[start] === 1, buf, start: start + PREFIX_BYTES, end };
    return uncompressed(framed, this.encoding, this.maxBytes);
  }

  /** Starts holding an unfinished message: a copy, since the chunk is valid only for now. */
  private hold(bytes: Buffer): void {
    this.held = new HeldBytes(this.maxBytes + PREFIX_BYTES);
    this.wanted = 0;
    this.append(bytes);
  }

  /**
   * Copies from `chunk` what the held message lacks; once whole, it is read (from one copy of
   * its bytes) and let go. Returns where the chunk's rest starts.
   */
  private fill(chunk: Buffer, out: FramedMessage[]): number {
    const held = this.held as HeldBytes;
    let at = 0;
    if (!this.isPrefixIn) {
      at = Math.min(chunk.length, PREFIX_BYTES - held.length);
      if (!this.append(chunk.subarray(0, at))) return at;
    }
    const take = Math.min(chunk.length - at, this.wanted - held.length);
    this.append(take === chunk.length ? chunk : chunk.subarray(at, at + take));
    at += take;
    if (held.length < this.wanted) return at;
    const whole = held.copy();
    this.release();
    out.push(this.message(whole, 0, whole.length));
    return at;
  }

  /**
   * Appends to the held message; its prefix, once complete, gives the length wanted. Returns
   * whether that length is known.
   */
  private append(bytes: Buffer): boolean {
    const held = this.held as HeldBytes;
    const before = held.length;
    // What must be held is held: the buffer budget (keepOnly) bounds it, not the mapped stores.
    held.append(bytes, true);
    if (this.isPrefixIn) return true;
    if (held.length < PREFIX_BYTES) return false;
    if (before === 0) bytes.copy(this.prefix, 0, 0, PREFIX_BYTES);
    else held.copyTo(this.prefix);
    this.wanted = this.framedLength(this.prefix, 0);
    return true;
  }
}
