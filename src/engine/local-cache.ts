// The local over-limit cache: keys known to be over their limit, in bounded memory.
import type { Clock } from '../lib/clock';

/** Accounted cost of one entry beyond its key: map slot, expiry and bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 48;

/**
 * A map of cache keys to expiry times whose accounted size never passes `maxBytes`: the
 * oldest entries go first. A key is over its limit until its window ends, so entries
 * expire with their window.
 */
interface Entry {
  readonly expiresAtMs: number;
  /** Unix seconds of the last add or hit, for averageAccessTime. */
  accessedSec: number;
}

export class OverLimitCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private accessedSecTotal = 0;
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

  /** Mean Unix second of the entries' last access, as the reference's cache library reports. */
  get averageAccessSec(): number {
    return this.entries.size === 0 ? 0 : Math.floor(this.accessedSecTotal / this.entries.size);
  }

  has(key: string): boolean {
    this.lookups += 1;
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses += 1;
      return false;
    }
    const now = this.clock.nowMs();
    if (entry.expiresAtMs > now) {
      this.hits += 1;
      const sec = Math.floor(now / 1000);
      this.accessedSecTotal += sec - entry.accessedSec;
      entry.accessedSec = sec;
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
    const now = this.clock.nowMs();
    const accessedSec = Math.floor(now / 1000);
    this.entries.set(key, { expiresAtMs: now + ttlSeconds * 1000, accessedSec });
    this.accessedSecTotal += accessedSec;
    this.bytes += cost;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= OverLimitCache.cost(key);
    this.accessedSecTotal -= entry.accessedSec;
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
    gauges.averageAccessTime.set(cache.averageAccessSec);
  });
}
