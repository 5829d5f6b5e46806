// Buffers of one size kept for reuse. A frame cut by the end of a read is copied out of the read
// buffer until the next read completes it (reader.ts); one of more than a few KiB is too large
// for Node's pool of small Buffers, so each copy would be an ArrayBuffer of its own. V8 counts
// those as external memory, and external memory allocated since the last full collection is
// taken from the old generation's room: a flood of 16 KiB DATA frames, where every 64 KiB read
// ends inside one, brought a full collection every few megabytes. Reused, they are allocated
// once.
export class SpareBuffers {
  private readonly spare: Buffer[] = [];

  /**
   * @param size the length of every buffer.
   * @param max how many are kept once given back; past it they are left to the collector.
   */
  constructor(
    readonly size: number,
    private readonly max: number,
  ) {}

  take(): Buffer {
    return this.spare.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(buf: Buffer): void {
    if (this.spare.length < this.max) this.spare.push(buf);
  }
}
