// A header block being read: HEADERS, then CONTINUATION frames until END_HEADERS (RFC 9113
// section 6.10). Fragments are copied into held bytes (held-bytes.ts), so each costs its bytes,
// not an object; a block may have only a few CONTINUATION frames and a bounded size, as
// nghttp2 allows.
import { ConnectionError, ErrorCode } from './frames';
import { HeldBytes } from './held-bytes';
import { MAX_CONTINUATIONS } from './limits';

/** Where the bytes of unfinished blocks are counted. */
export interface BlockBytes {
  take(bytes: number): boolean;
  give(bytes: number): void;
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

  /** HEADERS without END_HEADERS: the block's first fragment. */
  begin(stream: number, flags: number, fragment: Buffer): void {
    this.openStream = stream;
    this.openFlags = flags;
    this.continuations = 0;
    this.held ??= HeldBytes.reserve(this.maxBytes);
    if (this.held === undefined) throw calm('no room for an unfinished header block');
    this.isOpen = true;
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
    this.budget().give(held.length);
    held.release();
  }

  private add(held: HeldBytes, fragment: Buffer): void {
    const length = fragment.length;
    if (held.length + length > this.maxBytes) throw calm('a header block far past the limit');
    if (!this.budget().take(length)) throw calm('unfinished requests hold too many bytes');
    held.append(fragment);
  }
}
