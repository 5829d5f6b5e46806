// A header block being read: HEADERS, then CONTINUATION frames until END_HEADERS (RFC 9113
// section 6.10). Fragments are copied into held bytes (held-bytes.ts), so each costs its bytes,
// not an object; a block may have only a few CONTINUATION frames and a bounded size, as
// nghttp2 allows. An unfinished block counts as one request holding its bytes in the buffer
// budget; it is held even past the budget, since the HPACK table must follow every block, and
// the stream it opens is then refused (see isOverBudget).
import { ConnectionError, ErrorCode } from './frames';
import { HeldBytes } from './held-bytes';
import { MAX_CONTINUATIONS } from './limits';

/** Where the bytes of unfinished blocks are counted (a ConnectionBudget). */
export interface BlockBytes {
  /** Counts `bytes` and `requests` fitting or not; false when they did not fit. */
  force(bytes: number, requests: number): boolean;
  take(bytes: number, requests: number): boolean;
}

function calm(message: string): ConnectionError {
  return new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, message);
}

/**
 * Whole blocks are decoded from here: decoding is synchronous and copies what it keeps, so one
 * buffer serves every connection, and a block costs no allocation of its own.
 */
let scratch = Buffer.alloc(0);

function scratchOf(bytes: number): Buffer {
  if (scratch.length < bytes) scratch = Buffer.allocUnsafeSlow(bytes);
  return scratch;
}

export class HeaderBlocks {
  /** Reserved on the connection's first block in several frames, and kept for the next. */
  private held: HeldBytes | undefined = undefined;
  private isOpen = false;
  private continuations = 0;
  private openStream = 0;
  private openFlags = 0;
  private isOver = false;

  /** @param maxBytes the most one block may hold before the connection is cut. */
  constructor(
    private readonly maxBytes: number,
    private readonly budget: () => BlockBytes,
  ) {}

  /** The stream of the unfinished block, or 0. */
  get stream(): number {
    return this.isOpen ? this.openStream : 0;
  }

  /** The HEADERS flags of the unfinished block. */
  get flags(): number {
    return this.openFlags;
  }

  /**
   * Whether the unfinished block went past the connection's share of the buffer budget or past
   * its totals: the stream it opens is refused with REFUSED_STREAM once it has been decoded.
   */
  get isOverBudget(): boolean {
    return this.isOver;
  }

  /** HEADERS without END_HEADERS: the block's first fragment. */
  begin(stream: number, flags: number, fragment: Buffer): void {
    this.openStream = stream;
    this.openFlags = flags;
    this.continuations = 0;
    this.held ??= new HeldBytes(this.maxBytes);
    this.isOpen = true;
    this.isOver = !this.budget().force(0, 1);
    this.add(this.held, fragment);
  }

  /**
   * A CONTINUATION's fragment; the whole block once END_HEADERS came, valid only until the
   * next block is whole: the caller decodes it, then calls release().
   */
  continued(fragment: Buffer, isLast: boolean): Buffer | undefined {
    if (++this.continuations > MAX_CONTINUATIONS) {
      throw calm('a header block in too many CONTINUATION frames');
    }
    const held = this.held as HeldBytes;
    this.add(held, fragment);
    return isLast ? held.copyTo(scratchOf(this.maxBytes)) : undefined;
  }

  /** The block was decoded, or the connection closed: its bytes are given back. */
  release(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    const held = this.held as HeldBytes;
    this.budget().take(-held.length, -1);
    held.release();
  }

  private add(held: HeldBytes, fragment: Buffer): void {
    const length = fragment.length;
    if (held.length + length > this.maxBytes) throw calm('a header block far past the limit');
    if (!this.budget().force(length, 0)) this.isOver = true;
    held.append(fragment, true);
  }
}
