// Bytes kept for a request that is not yet whole (a header block in several frames, a body in
// several DATA frames), in memory of their own rather than in Buffers from malloc's heap.
//
// Why: a flood of unfinished requests once left the process 161 MiB above where it started
// after the attacker had gone. Held Buffers outlive a young collection, so they are freed only
// by the next full one, and when they are, glibc keeps the pages of its heap. A resizable
// ArrayBuffer is reserved address space whose pages are committed as bytes arrive and handed
// back to the system the moment release() shrinks it, whatever the collector does; V8 does not
// count it as external memory either, so held bytes do not bring full collections forward.
// Making one costs a system call, so only what must wait for more frames comes here: a request
// that arrives whole in one frame is never copied.

/** Bytes are committed this many at least at a time (a page). */
const STEP_BYTES = 4096;

/** By name: one made in another realm (a test's vm context) is not an instance of ours. */
function isRangeError(err: unknown): boolean {
  return (
    typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'RangeError'
  );
}

export class HeldBytes {
  private used = 0;

  private constructor(
    readonly maxBytes: number,
    private readonly store: ArrayBuffer,
  ) {}

  /**
   * Reserves room for up to `maxBytes`, none of it committed; undefined when the address space
   * cannot be had, which the caller refuses like any other request it has no room for.
   */
  static reserve(maxBytes: number): HeldBytes | undefined {
    try {
      return new HeldBytes(maxBytes, new ArrayBuffer(0, { maxByteLength: maxBytes }));
    } catch (err: unknown) {
      if (isRangeError(err)) return undefined;
      throw err;
    }
  }

  /** Bytes held. */
  get length(): number {
    return this.used;
  }

  /** Bytes of memory committed to hold them: 0 once released. */
  get committedBytes(): number {
    return this.store.byteLength;
  }

  /** Copies `bytes` after those held; the caller keeps within maxBytes. */
  append(bytes: Uint8Array): void {
    const end = this.used + bytes.length;
    if (end > this.maxBytes) throw new RangeError(`more than the ${this.maxBytes} bytes reserved`);
    const { store } = this;
    if (end > store.byteLength) {
      // Grown by half again at least, so a body of many frames commits in a few steps.
      const wanted = Math.max(end, store.byteLength + (store.byteLength >> 1), STEP_BYTES);
      store.resize(Math.min(this.maxBytes, wanted));
    }
    new Uint8Array(store, this.used, bytes.length).set(bytes);
    this.used = end;
  }

  /**
   * The bytes held, copied to the start of `target`: V8 reads a resizable ArrayBuffer's views
   * several times slower than a plain Buffer's (eight times, decoding an HPACK block), so what
   * is read byte by byte is read from a copy.
   */
  copyTo(target: Buffer): Buffer {
    target.set(new Uint8Array(this.store, 0, this.used));
    return target.subarray(0, this.used);
  }

  /** The bytes held, copied into a Buffer of their own that outlives release(). */
  copy(): Buffer {
    const out = Buffer.allocUnsafe(this.used);
    out.set(new Uint8Array(this.store, 0, this.used));
    return out;
  }

  /** Lets the bytes go: their pages are the system's again at once. */
  release(): void {
    this.used = 0;
    this.store.resize(0);
  }
}
