// The local over-limit cache: keys known to be over their limit, in bounded memory.
import type { Clock } from '../lib/clock';

/** Accounted cost of one entry beyond its key: map slot, expiry and bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 48;

/**
 * A map of cache keys to expiry times whose accounted size never passes `maxBytes`: the
 * oldest entries go first. A key is over its limit until its window ends, so entries
 * expire with their window.
 */
export class OverLimitCache {
  private readonly entries = new Map<string, number>();
  private bytes = 0;
  /** Entries dropped to stay within the size. */
  evictions = 0;

  constructor(
    readonly maxBytes: number,
    private readonly clock: Clock,
  ) {}

  private static cost(key: string): number {
    return key.length * 2 + ENTRY_OVERHEAD_BYTES;
  }

  get size(): number {
    return this.entries.size;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  has(key: string): boolean {
    const expiresAt = this.entries.get(key);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.clock.nowMs()) return true;
    this.remove(key);
    return false;
  }

  /** Remembers `key` as over its limit for `ttlSeconds`. */
  add(key: string, ttlSeconds: number): void {
    const cost = OverLimitCache.cost(key);
    if (cost > this.maxBytes) return;
    this.remove(key);
    while (this.bytes + cost > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.remove(oldest.value);
      this.evictions += 1;
    }
    this.entries.set(key, this.clock.nowMs() + ttlSeconds * 1000);
    this.bytes += cost;
  }

  private remove(key: string): void {
    if (this.entries.delete(key)) this.bytes -= OverLimitCache.cost(key);
  }
}
