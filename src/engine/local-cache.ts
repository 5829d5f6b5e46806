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
  /** Lookups, and how they went; entries that expired; keys added again while present. */
  lookups = 0;
  hits = 0;
  misses = 0;
  expired = 0;
  overwrites = 0;

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
    this.lookups += 1;
    const expiresAt = this.entries.get(key);
    if (expiresAt === undefined) {
      this.misses += 1;
      return false;
    }
    if (expiresAt > this.clock.nowMs()) {
      this.hits += 1;
      return true;
    }
    this.remove(key);
    this.expired += 1;
    this.misses += 1;
    return false;
  }

  /** Remembers `key` as over its limit for `ttlSeconds`. */
  add(key: string, ttlSeconds: number): void {
    const cost = OverLimitCache.cost(key);
    if (cost > this.maxBytes) return;
    if (this.entries.has(key)) this.overwrites += 1;
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

/** What reporting the cache needs of the statistics store. */
export interface GaugeSource {
  addGenerator(generate: () => void): void;
  gauge(name: string): { set(value: number): void };
}

/**
 * Reports the cache as the reference's cache library does, as gauges refreshed before every
 * flush: ratelimit.localcache.{entryCount,hitCount,missCount,lookupCount,evacuateCount,...}.
 */
export function reportLocalCache(
  cache: OverLimitCache,
  stats: GaugeSource,
  name: (stat: string) => string,
): void {
  const gauges = {
    entryCount: stats.gauge(name('entryCount')),
    hitCount: stats.gauge(name('hitCount')),
    missCount: stats.gauge(name('missCount')),
    lookupCount: stats.gauge(name('lookupCount')),
    evacuateCount: stats.gauge(name('evacuateCount')),
    expiredCount: stats.gauge(name('expiredCount')),
    overwriteCount: stats.gauge(name('overwriteCount')),
    // Lookups are map reads; there is no meaningful access time to report.
    averageAccessTime: stats.gauge(name('averageAccessTime')),
  };
  stats.addGenerator(() => {
    gauges.entryCount.set(cache.size);
    gauges.hitCount.set(cache.hits);
    gauges.missCount.set(cache.misses);
    gauges.lookupCount.set(cache.lookups);
    gauges.evacuateCount.set(cache.evictions);
    gauges.expiredCount.set(cache.expired);
    gauges.overwriteCount.set(cache.overwrites);
    gauges.averageAccessTime.set(0);
  });
}
