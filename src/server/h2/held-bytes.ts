// Bytes kept for a request that is not yet whole (a header block in several frames, a body in
// several DATA frames): a few KiB in a Buffer cut from Node's pool, more in memory of their own
// rather than in Buffers from malloc's heap.
//
// Why memory of their own: a flood of unfinished requests once left the process 161 MiB above
// where it started after the attacker had gone. Held Buffers outlive a young collection, so they
// are freed only by the next full one, and when they are, glibc keeps the pages of its heap. A
// resizable ArrayBuffer is reserved address space whose pages are committed as bytes arrive and
// handed back to the system the moment release() shrinks it, whatever the collector does; V8
// does not count it as external memory either, so held bytes do not bring full collections
// forward.
//
// Why not for every request: each such buffer is one or two memory mappings, made with a system
// call, and the kernel allows a process about 65,000 (vm.max_map_count); a process holding
// 32,000 of them died. So what fits in a pooled Buffer (4 KiB) stays there, and the mapped
// stores are made at most MAX_MAPPED_STORES times in the life of the process: one released goes
// back, its pages returned, for the next large request to reuse.

/**
 * What is held in a Buffer cut from Node's pool (Buffer.allocUnsafe) before it is mapped. Fixed,
 * not half of Buffer.poolSize: Node 24.18 and 26.3 raised the pool to 64 KiB (nodejs/node#63597),
 * which would keep up to 32 KiB per request on the heap and pin a whole slab for a small one.
 */
const POOLED_BYTES = 4 * 1024;
/** The first pooled Buffer's size: grown by doubling from here. */
const FIRST_BYTES = 64;
/** Bytes are committed this many at least at a time (a page). */
const STEP_BYTES = 4096;
/**
 * Mapped stores made at most, each one or two mappings: GRPC_MAX_BUFFERED_REQUESTS's most, since
 * every request held takes one at most (so 40,000 mappings, under the kernel's 65,530).
 */
export const MAX_MAPPED_STORES = 20_000;

/** By name: one made in another realm (a test's vm context) is not an instance of ours. */
function isRangeError(err: unknown): boolean {
  return (
    typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'RangeError'
  );
}

/** The process's mapped stores, kept for reuse by their reserved size once released. */
class MappedStores {
  private made = 0;
  private readonly spare = new Map<number, ArrayBuffer[]>();

  /** Stores made and not dropped: each holds its mappings whether in use or spare. */
  get count(): number {
    return this.made;
  }

  /** A store of `maxBytes`, none of it committed; undefined when none may be made. */
  take(maxBytes: number): ArrayBuffer | undefined {
    const reused = this.spare.get(maxBytes)?.pop();
    if (reused !== undefined) return reused;
    if (this.made >= MAX_MAPPED_STORES && !this.dropSpare()) return undefined;
    try {
      const store = new ArrayBuffer(0, { maxByteLength: maxBytes });
      this.made += 1;
      return store;
    } catch (err: unknown) {
      if (isRangeError(err)) return undefined;
      throw err;
    }
  }

  /** A store no longer in use: its pages go back to the system, its reservation is kept. */
  give(store: ArrayBuffer): void {
    store.resize(0);
    const size = store.maxByteLength;
    const list = this.spare.get(size);
    if (list === undefined) this.spare.set(size, [store]);
    else list.push(store);
  }

  /** Lets a spare store of another size go to the collector, to make room at the cap. */
  private dropSpare(): boolean {
    for (const list of this.spare.values()) {
      if (list.pop() === undefined) continue;
      this.made -= 1;
      return true;
    }
    return false;
  }
}

const mapped = new MappedStores();

/** Mapped stores made so far and not dropped (for the tests of the bound). */
export function mappedStores(): number {
  return mapped.count;
}

export class HeldBytes {
  private used = 0;
  /** The bytes while they fit a pooled Buffer (or, past it, when no store could be had). */
  private heap: Buffer | undefined = undefined;
  private store: ArrayBuffer | undefined = undefined;
  /** A view of the whole store that follows its length: one view, not one per append. */
  private storeView: Uint8Array | undefined = undefined;

  /** @param maxBytes the most it may hold. */
  constructor(readonly maxBytes: number) {}

  /** Bytes held. */
  get length(): number {
    return this.used;
  }

  /** Bytes of memory committed to hold them: 0 once released. */
  get committedBytes(): number {
    return this.store?.byteLength ?? this.heap?.length ?? 0;
  }

  /** Whether the bytes are held in a mapped store. */
  get isMapped(): boolean {
    return this.store !== undefined;
  }

  /**
   * Copies `bytes` after those held; the caller keeps within maxBytes. False, holding nothing
   * more, when they need a mapped store and none may be had, unless `mayUseHeap`: then they go
   * to a Buffer of malloc's heap (for what must be held anyway).
   */
  append(bytes: Uint8Array, mayUseHeap = false): boolean {
    const end = this.used + bytes.length;
    if (end > this.maxBytes) throw new RangeError(`more than the ${this.maxBytes} bytes reserved`);
    if (this.store === undefined) {
      const heap = this.heap;
      if (heap === undefined || end > heap.length) {
        if (end > POOLED_BYTES && this.map()) return this.append(bytes);
        if (end > POOLED_BYTES && !mayUseHeap) return false;
        this.growHeap(end);
      }
      (this.heap as Buffer).set(bytes, this.used);
      this.used = end;
      return true;
    }
    const { store } = this;
    if (end > store.byteLength) {
      // Grown by half again at least, so a body of many frames commits in a few steps.
      const wanted = Math.max(end, store.byteLength + (store.byteLength >> 1), STEP_BYTES);
      store.resize(Math.min(this.maxBytes, wanted));
    }
    (this.storeView as Uint8Array).set(bytes, this.used);
    this.used = end;
    return true;
  }

  /**
   * The bytes held, copied to the start of `target`: V8 reads a resizable ArrayBuffer's views
   * several times slower than a plain Buffer's (eight times, decoding an HPACK block), so what
   * is read byte by byte is read from a copy.
   */
  copyTo(target: Buffer): Buffer {
    target.set(this.view());
    return target.subarray(0, this.used);
  }

  /** The bytes held, copied into a Buffer of their own that outlives release(). */
  copy(): Buffer {
    const out = Buffer.allocUnsafe(this.used);
    out.set(this.view());
    return out;
  }

  /** Lets the bytes go: a store's pages are the system's again at once. */
  release(): void {
    this.used = 0;
    this.heap = undefined;
    if (this.store !== undefined) mapped.give(this.store);
    this.store = undefined;
    this.storeView = undefined;
  }

  private view(): Uint8Array {
    if (this.store !== undefined) return new Uint8Array(this.store, 0, this.used);
    return (this.heap ?? Buffer.alloc(0)).subarray(0, this.used);
  }

  /** Moves what the heap Buffer holds into a mapped store; false when none may be had. */
  private map(): boolean {
    const store = mapped.take(this.maxBytes);
    if (store === undefined) return false;
    this.store = store;
    this.storeView = new Uint8Array(store);
    const heap = this.heap;
    this.heap = undefined;
    if (heap !== undefined && this.used > 0) {
      store.resize(Math.min(this.maxBytes, Math.max(this.used, STEP_BYTES)));
      new Uint8Array(store, 0, this.used).set(heap.subarray(0, this.used));
    }
    return true;
  }

  private growHeap(end: number): void {
    const old = this.heap;
    const size = Math.min(this.maxBytes, Math.max(end, 2 * (old?.length ?? 0), FIRST_BYTES));
    const grown = size <= POOLED_BYTES ? Buffer.allocUnsafe(size) : Buffer.allocUnsafeSlow(size);
    if (old !== undefined && this.used > 0) grown.set(old.subarray(0, this.used));
    this.heap = grown;
  }
}
