// In-process statistics: counters, gauges and timers by name, with handles bound once and reused.
import {
  NullCounter,
  type Counter,
  type Gauge,
  type ReservoirTimer,
  type StatTags,
  type Timer,
  type TimerObserver,
} from './metrics';
import { STAT } from './names';
import { MetricRegistry } from './registry';
import { RuleCounters, ruleCounters, type RuleStats } from './rule-counters';
import { RuntimeKeys } from './runtime-keys';

export { ReservoirTimer } from './metrics';
export type { Counter, Gauge, StatTags, Timer, TimerObserver } from './metrics';
export type { RuleStats } from './rule-counters';

/** What the config compiler and the engine need to get rule handles. */
export interface RuleStatsFactory {
  /** False when statistics are off; callers then skip building dynamic stat keys. */
  readonly isEnabled: boolean;
  /**
   * The handles for a configured rule key such as `domain.key_value`, always created; the
   * same key gives the same handles.
   */
  forRule(key: string): RuleStats;
  /**
   * The handles for a key built from runtime values (detailed_metric, value_to_metric,
   * overrides). Past the cardinality cap a new key is not created: `fallback` (the rule's own
   * handles) is returned instead and the refusal is counted.
   */
  forRuntimeRule(key: string, fallback: RuleStats | undefined): RuleStats;
  /**
   * Notes the rule keys forRule creates from now on, until the returned scope is kept or
   * discarded: discarding removes them again, so a refused configuration leaves no
   * statistics behind. Scopes do not nest (compilation is synchronous).
   */
  newRulesScope(): { keep(): void; discard(): void };
  /**
   * Declares the keys of configured rules without creating their counters: each is listed
   * (at 0) until forRule or forRuntimeRule first asks for it, and counts toward the cap as a
   * configured key. A key declared again, or already created, stays as it is.
   */
  declareRules(keys: Iterable<string>): void;
}

/** A snapshot of every statistic, as sinks and /stats see it. */
export interface StatsSnapshot {
  readonly counters: ReadonlyMap<string, number>;
  readonly gauges: ReadonlyMap<string, number>;
}

export interface StatsStoreOptions {
  /** False makes every handle a no-op (DISABLE_STATS), at no per-request cost. */
  readonly isEnabled?: boolean;
  /** STATS_MAX_RULE_KEYS: most distinct rule keys, configured and runtime together. */
  readonly maxRuleKeys?: number;
  /** STATS_MAX_RUNTIME_KEY_BYTES: most UTF-8 bytes of keys built from request values. */
  readonly maxRuntimeKeyBytes?: number;
}

/**
 * The process-wide statistics: one face over three jobs, the registry of every statistic by
 * name (registry.ts), the counters of rule keys (rule-counters.ts), and the cardinality guard
 * over keys built from request values (runtime-keys.ts).
 */
export class StatsStore implements RuleStatsFactory {
  readonly isEnabled: boolean;
  readonly maxRuleKeys: number;
  private readonly registry: MetricRegistry;
  private readonly rules: RuleCounters;
  private readonly runtime: RuntimeKeys;
  private readonly nullRuleStats: RuleStats;
  private readonly dropped: Counter;

  constructor(options: StatsStoreOptions | boolean = {}) {
    const o = typeof options === 'boolean' ? { isEnabled: options } : options;
    this.isEnabled = o.isEnabled ?? true;
    this.maxRuleKeys = o.maxRuleKeys ?? 10_000;
    this.registry = new MetricRegistry(this.isEnabled);
    this.rules = new RuleCounters(this.registry);
    this.runtime = new RuntimeKeys(o.maxRuntimeKeyBytes ?? 1024 * 1024);
    const off = new NullCounter('');
    this.nullRuleStats = Object.freeze({
      key: '',
      totalHits: off,
      overLimit: off,
      nearLimit: off,
      withinLimit: off,
      overLimitWithLocalCache: off,
      shadowMode: off,
      totalNegativeHits: off,
    });
    this.dropped = this.counter(STAT.ruleStatsDropped);
  }

  get maxRuntimeKeyBytes(): number {
    return this.runtime.maxBytes;
  }

  counter(name: string): Counter {
    return this.registry.counter(name);
  }

  /**
   * A counter whose name carries a runtime value (an unknown domain): past the cardinality cap
   * (in keys or in bytes) a new one is not created, and the refusal is counted.
   */
  runtimeCounter(name: string): Counter {
    const existing = this.registry.existingCounter(name);
    if (existing !== undefined || !this.isEnabled) return existing ?? this.counter(name);
    const bytes = Buffer.byteLength(name, 'utf8');
    if (!this.hasRoomFor(bytes)) {
      this.dropped.inc();
      return this.nullRuleStats.totalHits;
    }
    const counter = this.counter(name);
    this.runtime.add(name, bytes, false, [counter]);
    return counter;
  }

  /** Whether one more runtime key of `bytes` fits both caps. */
  private hasRoomFor(bytes: number): boolean {
    return (
      this.rules.configuredCount + this.runtime.size < this.maxRuleKeys &&
      this.runtime.fitsBytes(bytes)
    );
  }

  /**
   * The gauge of a name and tags; the snapshot lists it under the name with the tags written
   * in as statsd does (`name.__key=value`).
   */
  gauge(name: string, tags: StatTags = {}): Gauge {
    return this.registry.gauge(name, tags);
  }

  /**
   * Forgets the gauge of a name and tags (a tag that named a version now gone): it leaves the
   * snapshot, and the next flush tells the sinks to drop its series.
   */
  removeGauge(name: string, tags: StatTags = {}): void {
    this.registry.removeGauge(name, tags);
  }

  /** The gauges removed since the last call, for the flusher. */
  takeRemovedGauges(): Gauge[] {
    return this.registry.takeRemovedGauges();
  }

  timer(name: string): Timer {
    return this.registry.timer(name);
  }

  /**
   * Registers a source of per-sample observers; it is asked once for every timer, existing and
   * future, and may decline by returning undefined.
   */
  observeTimers(factory: (name: string) => TimerObserver | undefined): void {
    this.registry.observeTimers(factory);
  }

  forRule(key: string): RuleStats {
    if (!this.isEnabled) return this.nullRuleStats;
    if (!this.rules.isConfigured(key)) this.configure(key, true);
    return this.rules.get(key) ?? this.rules.make(key);
  }

  declareRules(keys: Iterable<string>): void {
    if (!this.isEnabled) return;
    for (const key of keys) if (!this.rules.isConfigured(key)) this.configure(key, false);
  }

  /** Makes `key` a configured key; a runtime key of that name is never released from now on. */
  private configure(key: string, isNoted: boolean): void {
    this.rules.configure(key, isNoted);
    this.runtime.remove(key);
  }

  forRuntimeRule(key: string, fallback: RuleStats | undefined): RuleStats {
    if (!this.isEnabled) return this.nullRuleStats;
    const existing = this.rules.get(key);
    if (existing !== undefined) return existing;
    if (this.rules.isConfigured(key)) return this.rules.make(key);
    const bytes = Buffer.byteLength(key, 'utf8');
    if (!this.hasRoomFor(bytes)) {
      this.dropped.inc();
      return fallback ?? this.nullRuleStats;
    }
    const stats = this.rules.make(key);
    this.runtime.add(key, bytes, true, ruleCounters(stats));
    return stats;
  }

  newRulesScope(): { keep(): void; discard(): void } {
    return this.rules.openScope();
  }

  /**
   * Releases the keys built from request values whose counters have not moved for
   * `idleChecks` calls in a row (the flusher calls once per flush, after sending): their
   * counts have gone out, and the room they held is free for new keys. Returns the
   * statistic names released, for sinks that keep series of their own.
   */
  releaseIdle(idleChecks: number): string[] {
    const released: string[] = [];
    for (const { key, isRule } of this.runtime.takeIdle(idleChecks)) {
      if (isRule) released.push(...this.rules.remove(key));
      else {
        this.registry.removeCounter(key);
        released.push(key);
      }
    }
    return released;
  }

  /** Bytes held by keys built from request values. */
  get runtimeKeyBytes(): number {
    return this.runtime.bytes;
  }

  /** How many distinct rule keys exist, configured (counters made or not) and runtime. */
  get ruleKeyCount(): number {
    return this.rules.configuredCount + this.runtime.ruleKeys;
  }

  /**
   * Adds a function that sets gauges from some other state (the local cache's sizes); it runs
   * before every snapshot, so flushes and /stats see fresh values.
   */
  addGenerator(generate: () => void): void {
    this.registry.addGenerator(generate);
  }

  /**
   * Current values of every counter and gauge, the counters of configured rules never matched
   * included at 0 (`countersMade` leaves those out: the flusher sends no counter at 0).
   */
  snapshot(options: { readonly countersMade?: boolean } = {}): StatsSnapshot {
    const { counters, gauges } = this.registry.values();
    if (options.countersMade !== true) this.rules.addUnmade(counters);
    return { counters, gauges };
  }

  /** Every gauge with its tags, for the flusher; call snapshot() first to refresh generated ones. */
  allGauges(): Iterable<Gauge> {
    return this.registry.allGauges();
  }

  /** Every timer, for sinks to drain. */
  allTimers(): Iterable<ReservoirTimer> {
    return this.registry.allTimers();
  }
}
