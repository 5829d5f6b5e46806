// Which keys of the memory store expire when: one bucket per second of expiry, in a min-heap,
// so that sweeping and eviction touch only the keys that are due instead of every key.

/** A min-heap of numbers (the seconds that have a bucket). */
class SecondsHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): number | undefined {
    return this.items[0];
  }

  push(value: number): void {
    const items = this.items;
    let i = items.length;
    items.push(value);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = items[parent] as number;
      if (above <= value) break;
      items[i] = above;
      i = parent;
    }
    items[i] = value;
  }

  pop(): number | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length && (items[right] as number) < (items[left] as number) ? right : left;
      if ((items[child] as number) >= last) break;
      items[i] = items[child] as number;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/**
 * Keys filed by the second their expiry falls in. A key is filed when it is created; a later
 * increment that moves its expiry changes only the store's table, and the sweep re-files the
 * key when it reaches the old bucket. A key the store no longer holds (expired on access,
 * evicted) is dropped when its bucket is reached. A key deleted and created again is filed
 * again; its older filing, reached first, finds the new expiry later and files it once more,
 * and whichever copy comes second finds the key gone: at most one copy per creation, each
 * dropped within a second of its bucket falling due.
 */
export class ExpiryIndex {
  private readonly buckets = new Map<number, string[]>();
  private readonly seconds = new SecondsHeap();
  /** The bucket being worked through, and how far. */
  private current: { second: number; keys: string[]; at: number } | undefined;

  /** @param expiresAtMs the expiry of the store's key, or undefined when it holds none. */
  constructor(private readonly expiresAtMs: (key: string) => number | undefined) {}

  file(key: string, expiresAtMs: number): void {
    const second = Math.floor(expiresAtMs / 1000);
    let bucket = this.buckets.get(second);
    if (bucket === undefined) {
      bucket = [];
      this.buckets.set(second, bucket);
      this.seconds.push(second);
    }
    bucket.push(key);
  }

  /**
   * The next held key in expiry order from a bucket whose whole second has passed at `nowMs`
   * (so the key has expired), or from any bucket when `nowMs` is Infinity; it is taken out of
   * the index, and keys found extended are re-filed on the way. Undefined when no bucket is
   * due, or once `budget.steps` keys were looked at.
   */
  takeNext(nowMs: number, budget: { steps: number }): string | undefined {
    const dueSecond = Math.floor(nowMs / 1000) - 1;
    while (budget.steps > 0) {
      const current = this.current ?? this.openNext(dueSecond);
      if (current === undefined) return undefined;
      if (current.at >= current.keys.length) {
        this.current = undefined;
        continue;
      }
      const key = current.keys[current.at] as string;
      current.at += 1;
      budget.steps -= 1;
      const expiresAtMs = this.expiresAtMs(key);
      if (expiresAtMs === undefined) continue;
      if (Math.floor(expiresAtMs / 1000) > current.second) {
        this.file(key, expiresAtMs);
        continue;
      }
      return key;
    }
    return undefined;
  }

  private openNext(dueSecond: number): ExpiryIndex['current'] {
    const second = this.seconds.peek();
    if (second === undefined || second > dueSecond) return undefined;
    this.seconds.pop();
    const keys = this.buckets.get(second) ?? [];
    this.buckets.delete(second);
    this.current = { second, keys, at: 0 };
    return this.current;
  }

  clear(): void {
    this.buckets.clear();
    while (this.seconds.size > 0) this.seconds.pop();
    this.current = undefined;
  }
}
