// Which keys of the memory store expire when: one bucket per second of expiry, in a min-heap,
// so that sweeping and eviction touch only the keys that are due instead of every key.

/** What the index files: the store's own slot objects, told apart from newer ones by identity. */
export interface ExpiringSlot {
  readonly key: string;
  expiresAtMs: number;
}

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
 * Slots filed by the second their expiry falls in. A slot is filed once, when it is created;
 * a later increment that moves its expiry only changes `expiresAtMs`, and the sweep re-files
 * it when it reaches the old bucket. A slot the store no longer holds (expired on access,
 * evicted, replaced) is dropped when its bucket is reached.
 */
export class ExpiryIndex<S extends ExpiringSlot> {
  private readonly buckets = new Map<number, S[]>();
  private readonly seconds = new SecondsHeap();
  /** The bucket being worked through, and how far. */
  private current: { second: number; slots: S[]; at: number } | undefined;

  /** @param isHeld whether the store still holds this very slot. */
  constructor(private readonly isHeld: (slot: S) => boolean) {}

  file(slot: S): void {
    const second = Math.floor(slot.expiresAtMs / 1000);
    let bucket = this.buckets.get(second);
    if (bucket === undefined) {
      bucket = [];
      this.buckets.set(second, bucket);
      this.seconds.push(second);
    }
    bucket.push(slot);
  }

  /**
   * The next held slot in expiry order from a bucket whose whole second has passed at `nowMs`
   * (so the slot has expired), or from any bucket when `nowMs` is Infinity; it is taken out of
   * the index, and slots found extended are re-filed on the way. Undefined when no bucket is
   * due, or once `budget.steps` slots were looked at.
   */
  takeNext(nowMs: number, budget: { steps: number }): S | undefined {
    const dueSecond = Math.floor(nowMs / 1000) - 1;
    while (budget.steps > 0) {
      const current = this.current ?? this.openNext(dueSecond);
      if (current === undefined) return undefined;
      if (current.at >= current.slots.length) {
        this.current = undefined;
        continue;
      }
      const slot = current.slots[current.at] as S;
      current.at += 1;
      budget.steps -= 1;
      if (!this.isHeld(slot)) continue;
      if (Math.floor(slot.expiresAtMs / 1000) > current.second) {
        this.file(slot);
        continue;
      }
      return slot;
    }
    return undefined;
  }

  private openNext(dueSecond: number): ExpiryIndex<S>['current'] {
    const second = this.seconds.peek();
    if (second === undefined || second > dueSecond) return undefined;
    this.seconds.pop();
    const slots = this.buckets.get(second) ?? [];
    this.buckets.delete(second);
    this.current = { second, slots, at: 0 };
    return this.current;
  }

  clear(): void {
    this.buckets.clear();
    while (this.seconds.size > 0) this.seconds.pop();
    this.current = undefined;
  }
}
