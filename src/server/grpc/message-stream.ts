// Splits a streaming call's request body into its gRPC messages as the chunks arrive, each
// within MAX_REQUEST_BYTES, holding at most one unfinished message.
import {
  CallError,
  GrpcStatus,
  messageTooLarge,
  uncompressed,
  type FramedMessage,
} from './protocol';

/** The messages of one request stream, in order. */
export class MessageStream {
  private chunks: Buffer[] = [];
  private size = 0;

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
    this.chunks.push(chunk);
    this.size += chunk.length;
    const out: FramedMessage[] = [];
    for (;;) {
      if (this.size < 5) return this.keeping(chunk, out);
      const head = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : this.join();
      const flag = head[0];
      if (flag !== 0 && flag !== 1)
        throw new CallError(GrpcStatus.INTERNAL, `the message flag ${String(flag)} is not 0 or 1`);
      const length = head.readUInt32BE(1);
      if (length > this.maxBytes) throw messageTooLarge(this.maxBytes);
      if (this.size < 5 + length) return this.keeping(chunk, out);
      const whole = this.join();
      const framed = { isCompressed: flag === 1, buf: whole, start: 5, end: 5 + length };
      out.push(uncompressed(framed, this.encoding, this.maxBytes));
      const rest = whole.subarray(5 + length);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.size = rest.length;
    }
  }

  /** Bytes of the unfinished message held. */
  get heldBytes(): number {
    return this.size;
  }

  /** Whether the body ended in the middle of a message. */
  get isCut(): boolean {
    return this.size > 0;
  }

  /**
   * A chunk is valid only during its 'data' event (the own HTTP/2 reads into one shared buffer,
   * see h2/stream.ts): the messages are read before the event ends, and what is kept of the
   * chunk for the next one, an unfinished message, is copied. Joined bytes are already a copy.
   */
  private keeping(chunk: Buffer, out: FramedMessage[]): FramedMessage[] {
    const last = this.chunks.length - 1;
    const kept = this.chunks[last];
    if (kept !== undefined && kept.buffer === chunk.buffer) this.chunks[last] = Buffer.from(kept);
    return out;
  }

  private join(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0] as Buffer;
  }
}
