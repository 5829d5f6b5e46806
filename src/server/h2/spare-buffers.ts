// Buffers of one size kept for reuse. What a connection must keep past a read (a frame the read
// ended inside, the rest of a read left for a later turn; reader.ts) is copied out of the read
// buffer; a copy of more than a few KiB is too large for Node's pool of small Buffers, so each
// would be an ArrayBuffer of its own. V8 counts those as external memory, and external memory
// allocated since the last full collection is taken from the old generation's room: a flood of
// 16 KiB DATA frames, where every 64 KiB read ends inside one, brought a full collection every
// few megabytes. Reused, they are allocated once.
import { isPoisoned } from './shared-reads';

/**
 * The largest copy taken from Node's pool of small Buffers (Buffer.allocUnsafe); larger ones are
 * spare buffers. Fixed, not Node's own threshold (half of Buffer.poolSize): Node 26.3 and 24.18
 * raised the pool from 8 to 64 KiB (nodejs/node#63597), which would send every cut 16 KiB frame
 * to the pool, a new 64 KiB slab every four frames, the external memory spare buffers avoid.
 */
const POOLED_BYTES = 4 * 1024;

export class SpareBuffers {
  private readonly spare: Buffer[] = [];

  /**
   * @param size the length of every spare buffer.
   * @param max how many are kept once given back; past it they are left to the collector.
   */
  constructor(
    readonly size: number,
    private readonly max: number,
  ) {}

  /**
   * A buffer of at least `bytes`: from Node's pool when that small, a spare one when it fits,
   * else one of its own.
   */
  take(bytes: number): Buffer {
    if (bytes <= POOLED_BYTES || bytes > this.size) return Buffer.allocUnsafe(bytes);
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  /** A buffer take() gave, once nothing reads it any more: kept if it is a spare one. */
  give(buf: Buffer): void {
    if (buf.length !== this.size || buf.byteOffset !== 0 || this.spare.length >= this.max) return;
    // The suites overwrite it, so that a view kept past its use fails a test (shared-reads.ts).
    if (isPoisoned) buf.fill(0xa5);
    this.spare.push(buf);
  }
}
