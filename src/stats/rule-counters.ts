// The counters of rate limit rules: seven per rule key, made when the rule is first used, and
// the configured keys whose counters are not made yet (listed at 0).
import type { Counter } from './metrics';
import { RULE_SCOPE, RULE_STAT_SUFFIXES, sanitizeStatName } from './names';
import type { MetricRegistry } from './registry';

/** The counters of one rate limit rule, bound when the configuration compiles. */
export interface RuleStats {
  readonly key: string;
  readonly totalHits: Counter;
  readonly overLimit: Counter;
  readonly nearLimit: Counter;
  readonly withinLimit: Counter;
  readonly overLimitWithLocalCache: Counter;
  readonly shadowMode: Counter;
  readonly totalNegativeHits: Counter;
}

export function ruleCounters(stats: RuleStats): Counter[] {
  return [
    stats.totalHits,
    stats.overLimit,
    stats.nearLimit,
    stats.withinLimit,
    stats.overLimitWithLocalCache,
    stats.shadowMode,
    stats.totalNegativeHits,
  ];
}

/** The common start of a rule key's counter names: `ratelimit.service.rate_limit.<key>.`. */
function ruleStatBase(key: string): string {
  return `${RULE_SCOPE}.${sanitizeStatName(key)}.`;
}

/** Rule keys: configured ones (counters made or not) and the made counters of every key. */
export class RuleCounters {
  private readonly made = new Map<string, RuleStats>();
  /**
   * Every configured rule key, its counters made or not. Until they are, the key is listed at
   * 0, which is what a sink would have been sent (nothing: counters at 0 are not flushed).
   */
  private readonly configured = new Set<string>();
  /** Keys configured since openScope(), while a scope is open. */
  private scopeKeys: string[] | undefined;

  constructor(private readonly registry: MetricRegistry) {}

  get configuredCount(): number {
    return this.configured.size;
  }

  isConfigured(key: string): boolean {
    return this.configured.has(key);
  }

  /** The rule's counters if they are made. */
  get(key: string): RuleStats | undefined {
    return this.made.get(key);
  }

  /** Makes `key` a configured key, noted in the open scope unless its counters exist. */
  configure(key: string, isNoted: boolean): void {
    if (isNoted && !this.made.has(key)) this.scopeKeys?.push(key);
    this.configured.add(key);
  }

  make(key: string): RuleStats {
    const base = ruleStatBase(key);
    const s = RULE_STAT_SUFFIXES;
    const r = this.registry;
    const stats: RuleStats = Object.freeze({
      key,
      totalHits: r.counter(base + s.totalHits),
      overLimit: r.counter(base + s.overLimit),
      nearLimit: r.counter(base + s.nearLimit),
      withinLimit: r.counter(base + s.withinLimit),
      overLimitWithLocalCache: r.counter(base + s.overLimitWithLocalCache),
      shadowMode: r.counter(base + s.shadowMode),
      totalNegativeHits: r.counter(base + s.totalNegativeHits),
    });
    this.made.set(key, stats);
    return stats;
  }

  /** Removes a rule key and its counters; returns the counter names removed. */
  remove(key: string): readonly string[] {
    this.configured.delete(key);
    const stats = this.made.get(key);
    if (stats === undefined) return [];
    this.made.delete(key);
    const names = ruleCounters(stats).map((c) => c.name);
    for (const name of names) this.registry.removeCounter(name);
    return names;
  }

  /** Notes the keys configured from now on, until the scope is kept or discarded. */
  openScope(): { keep(): void; discard(): void } {
    const keys: string[] = [];
    this.scopeKeys = keys;
    return {
      keep: () => {
        this.scopeKeys = undefined;
      },
      discard: () => {
        this.scopeKeys = undefined;
        for (const key of keys) this.remove(key);
      },
    };
  }

  /** Adds the counters of configured keys whose counters are not made, at 0. */
  addUnmade(counters: Map<string, number>): void {
    for (const key of this.configured) {
      if (this.made.has(key)) continue;
      const base = ruleStatBase(key);
      for (const suffix of Object.values(RULE_STAT_SUFFIXES)) counters.set(base + suffix, 0);
    }
  }
}
