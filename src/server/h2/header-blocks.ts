// A header block being read: HEADERS, then CONTINUATION frames until END_HEADERS (RFC 9113
// section 6.10). Fragments are copied into one buffer, so each costs its bytes, not an object;
// a block may have only a few CONTINUATION frames and a bounded size, as nghttp2 allows.
import { ConnectionError, ErrorCode } from './frames';
import { MAX_CONTINUATIONS } from './limits';

/** Where the bytes of unfinished blocks are counted. */
export interface BlockBytes {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

function calm(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, message);
}

export class HeaderBlocks {
  private buf: Buffer | undefined = undefined;
  private used = 0;
  private continuations = 0;
  private openStream = 0;
  private openFlags = 0;

  /** @param maxBytes the most one block may hold before the connection is cut. */
  constructor(
    private readonly maxBytes: number,
    private readonly budget: () => BlockBytes,
  ) {}

  /** The stream of the unfinished block, or 0. */
  get stream(): number {
    return this.buf === undefined ? 0 : this.openStream;
  }

  /** The HEADERS flags of the unfinished block. */
  get flags(): number {
    return this.openFlags;
  }

  /** HEADERS without END_HEADERS: the block's first fragment. */
  begin(stream: number, flags: number, fragment: Buffer): void {
    this.openStream = stream;
    this.openFlags = flags;
    this.continuations = 0;
    this.used = 0;
    this.buf = Buffer.allocUnsafe(Math.max(1024, 2 * fragment.length));
    this.add(fragment);
  }

  /** A CONTINUATION's fragment; the whole block once END_HEADERS came. */
  continued(fragment: Buffer, isLast: boolean): Buffer | undefined {
    if (++this.continuations > MAX_CONTINUATIONS) {
      throw calm('a header block in too many CONTINUATION frames');
    }
    this.add(fragment);
    if (!isLast) return undefined;
    const block = (this.buf as Buffer).subarray(0, this.used);
    this.release();
    return block;
  }

  /** The connection closed: an unfinished block's bytes are given back. */
  release(): void {
    if (this.buf === undefined) return;
    this.budget().give(this.used);
    this.buf = undefined;
  }

  private add(fragment: Buffer): void {
    const length = fragment.length;
    if (this.used + length > this.maxBytes) throw calm('a header block far past the limit');
    if (!this.budget().take(length)) throw calm('unfinished requests hold too many bytes');
    let buf = this.buf as Buffer;
    if (this.used + length > buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.maxBytes, 2 * (this.used + length)));
      buf.copy(grown, 0, 0, this.used);
      buf = grown;
      this.buf = grown;
    }
    this.used += fragment.copy(buf, this.used);
  }
}
