// In-process statistics: counters, gauges and timers by name, with handles bound once and reused.
import { RULE_SCOPE, RULE_STAT_SUFFIXES, STAT, sanitizeStatName } from './names';
import {
  LastValueGauge,
  NullCounter,
  NullTimer,
  ReservoirTimer,
  SummingCounter,
  type Counter,
  type Gauge,
  type StatTags,
  type Timer,
  type TimerObserver,
} from './metrics';
import { nameTagSuffix } from './tags';

export { ReservoirTimer } from './metrics';
export type { Counter, Gauge, StatTags, Timer, TimerObserver } from './metrics';

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

function ruleCounters(stats: RuleStats): Counter[] {
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

/** A statistics key built from request values, and how long it has been idle. */
interface RuntimeKey {
  readonly bytes: number;
  /** The counters its name made (seven for a rule key, one for an unknown domain). */
  readonly counters: readonly Counter[];
  /** The sum of its counters at the last check, and how many checks in a row it held. */
  total: number;
  idleChecks: number;
}

/** The process-wide statistics registry. */
export class StatsStore implements RuleStatsFactory {
  readonly isEnabled: boolean;
  readonly maxRuleKeys: number;
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, LastValueGauge>();
  private readonly timers = new Map<string, ReservoirTimer>();
  /** Rule keys whose counters exist: configured ones first used, and runtime ones. */
  private readonly ruleStats = new Map<string, RuleStats>();
  /**
   * Every configured rule key, its counters created or not. Counters of a rule are made when
   * it is first matched; until then the key is listed at 0, which is what a sink would have
   * been sent (nothing: counters at 0 are not flushed).
   */
  private readonly configured = new Set<string>();
  /** Keys in ruleStats built from request values (the rest of ruleStats is configured). */
  private runtimeRuleKeys = 0;
  private readonly timerObservers: ((name: string) => TimerObserver | undefined)[] = [];
  private readonly generators: (() => void)[] = [];
  private readonly nullRuleStats: RuleStats;
  private readonly dropped: Counter;
  readonly maxRuntimeKeyBytes: number;
  /** Keys built from request values: rule keys (by key) and counters (by name). */
  private readonly runtimeKeys = new Map<string, RuntimeKey>();
  private runtimeBytes = 0;
  /** Runtime keys that are a counter only (unknown domains), not rule keys. */
  private runtimeCounters = 0;
  /** Rule keys created since newRulesScope(), while a scope is open. */
  private scopeKeys: string[] | undefined;

  constructor(options: StatsStoreOptions | boolean = {}) {
    const o = typeof options === 'boolean' ? { isEnabled: options } : options;
    this.isEnabled = o.isEnabled ?? true;
    this.maxRuleKeys = o.maxRuleKeys ?? 10_000;
    this.maxRuntimeKeyBytes = o.maxRuntimeKeyBytes ?? 1024 * 1024;
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

  counter(name: string): Counter {
    let counter = this.counters.get(name);
    if (counter === undefined) {
      counter = this.isEnabled ? new SummingCounter(name) : new NullCounter(name);
      if (this.isEnabled) this.counters.set(name, counter);
    }
    return counter;
  }

  /**
   * A counter whose name carries a runtime value (an unknown domain): past the cardinality cap
   * (in keys or in bytes) a new one is not created, and the refusal is counted.
   */
  runtimeCounter(name: string): Counter {
    const existing = this.counters.get(name);
    if (existing !== undefined || !this.isEnabled) return existing ?? this.counter(name);
    const bytes = Buffer.byteLength(name, 'utf8');
    if (!this.hasRoomFor(bytes)) {
      this.dropped.inc();
      return this.nullRuleStats.totalHits;
    }
    const counter = this.counter(name);
    this.noteRuntimeKey(name, bytes, [counter]);
    this.runtimeCounters += 1;
    return counter;
  }

  /** Whether one more runtime key of `bytes` fits both caps. */
  private hasRoomFor(bytes: number): boolean {
    return (
      this.ruleKeyCount + this.runtimeCounters < this.maxRuleKeys &&
      this.runtimeBytes + bytes <= this.maxRuntimeKeyBytes
    );
  }

  private noteRuntimeKey(key: string, bytes: number, counters: readonly Counter[]): void {
    this.runtimeKeys.set(key, { bytes, counters, total: 0, idleChecks: 0 });
    this.runtimeBytes += bytes;
  }

  /**
   * The gauge of a name and tags; the snapshot lists it under the name with the tags written
   * in as statsd does (`name.__key=value`).
   */
  gauge(name: string, tags: StatTags = {}): Gauge {
    const key = name + nameTagSuffix(tags);
    let gauge = this.gauges.get(key);
    if (gauge === undefined) {
      gauge = new LastValueGauge(name, tags);
      if (this.isEnabled) this.gauges.set(key, gauge);
    }
    return gauge;
  }

  timer(name: string): Timer {
    if (!this.isEnabled) return new NullTimer(name);
    let timer = this.timers.get(name);
    if (timer === undefined) {
      timer = new ReservoirTimer(name);
      this.timers.set(name, timer);
      for (const factory of this.timerObservers) {
        const observer = factory(name);
        if (observer !== undefined) timer.observe(observer);
      }
    }
    return timer;
  }

  /**
   * Registers a source of per-sample observers; it is asked once for every timer, existing and
   * future, and may decline by returning undefined.
   */
  observeTimers(factory: (name: string) => TimerObserver | undefined): void {
    this.timerObservers.push(factory);
    for (const timer of this.timers.values()) {
      const observer = factory(timer.name);
      if (observer !== undefined) timer.observe(observer);
    }
  }

  forRule(key: string): RuleStats {
    if (!this.isEnabled) return this.nullRuleStats;
    if (!this.configured.has(key)) {
      if (!this.ruleStats.has(key)) this.scopeKeys?.push(key);
      this.configure(key);
    }
    return this.ruleStats.get(key) ?? this.createRuleStats(key);
  }

  declareRules(keys: Iterable<string>): void {
    if (!this.isEnabled) return;
    for (const key of keys) if (!this.configured.has(key)) this.configure(key);
  }

  /** Makes `key` a configured key; a runtime key of that name is never released from now on. */
  private configure(key: string): void {
    this.configured.add(key);
    if (this.runtimeKeys.has(key)) {
      this.forgetRuntimeKey(key);
      this.runtimeRuleKeys -= 1;
    }
  }

  forRuntimeRule(key: string, fallback: RuleStats | undefined): RuleStats {
    if (!this.isEnabled) return this.nullRuleStats;
    const existing = this.ruleStats.get(key);
    if (existing !== undefined) return existing;
    if (this.configured.has(key)) return this.createRuleStats(key);
    const bytes = Buffer.byteLength(key, 'utf8');
    if (!this.hasRoomFor(bytes)) {
      this.dropped.inc();
      return fallback ?? this.nullRuleStats;
    }
    const stats = this.createRuleStats(key);
    this.noteRuntimeKey(key, bytes, ruleCounters(stats));
    this.runtimeRuleKeys += 1;
    return stats;
  }

  newRulesScope(): { keep(): void; discard(): void } {
    const keys: string[] = [];
    this.scopeKeys = keys;
    return {
      keep: () => {
        this.scopeKeys = undefined;
      },
      discard: () => {
        this.scopeKeys = undefined;
        for (const key of keys) this.removeRule(key);
      },
    };
  }

  /** Removes a rule key's handles and counters. */
  private removeRule(key: string): readonly string[] {
    this.configured.delete(key);
    const stats = this.ruleStats.get(key);
    if (stats === undefined) return [];
    this.ruleStats.delete(key);
    const names = ruleCounters(stats).map((c) => c.name);
    for (const name of names) this.counters.delete(name);
    return names;
  }

  private forgetRuntimeKey(key: string): void {
    const entry = this.runtimeKeys.get(key);
    if (entry === undefined) return;
    this.runtimeKeys.delete(key);
    this.runtimeBytes -= entry.bytes;
  }

  /**
   * Releases the keys built from request values whose counters have not moved for
   * `idleChecks` calls in a row (the flusher calls once per flush, after sending): their
   * counts have gone out, and the room they held is free for new keys. Returns the
   * statistic names released, for sinks that keep series of their own.
   */
  releaseIdle(idleChecks: number): string[] {
    const released: string[] = [];
    for (const [key, entry] of this.runtimeKeys) {
      let total = 0;
      for (const counter of entry.counters) total += counter.value;
      if (total !== entry.total) {
        entry.total = total;
        entry.idleChecks = 0;
        continue;
      }
      entry.idleChecks += 1;
      if (entry.idleChecks < idleChecks) continue;
      this.forgetRuntimeKey(key);
      if (this.ruleStats.has(key)) {
        this.runtimeRuleKeys -= 1;
        released.push(...this.removeRule(key));
      } else {
        this.counters.delete(key);
        this.runtimeCounters -= 1;
        released.push(key);
      }
    }
    return released;
  }

  /** Bytes held by keys built from request values. */
  get runtimeKeyBytes(): number {
    return this.runtimeBytes;
  }

  private createRuleStats(key: string): RuleStats {
    const base = ruleStatBase(key);
    const s = RULE_STAT_SUFFIXES;
    const stats: RuleStats = Object.freeze({
      key,
      totalHits: this.counter(base + s.totalHits),
      overLimit: this.counter(base + s.overLimit),
      nearLimit: this.counter(base + s.nearLimit),
      withinLimit: this.counter(base + s.withinLimit),
      overLimitWithLocalCache: this.counter(base + s.overLimitWithLocalCache),
      shadowMode: this.counter(base + s.shadowMode),
      totalNegativeHits: this.counter(base + s.totalNegativeHits),
    });
    this.ruleStats.set(key, stats);
    return stats;
  }

  /** How many distinct rule keys exist, configured (counters made or not) and runtime. */
  get ruleKeyCount(): number {
    return this.configured.size + this.runtimeRuleKeys;
  }

  /**
   * Adds a function that sets gauges from some other state (the local cache's sizes); it runs
   * before every snapshot, so flushes and /stats see fresh values.
   */
  addGenerator(generate: () => void): void {
    if (this.isEnabled) this.generators.push(generate);
  }

  /**
   * Current values of every counter and gauge, the counters of configured rules never matched
   * included at 0 (`countersMade` leaves those out: the flusher sends no counter at 0).
   */
  snapshot(options: { readonly countersMade?: boolean } = {}): StatsSnapshot {
    for (const generate of this.generators) generate();
    const counters = new Map<string, number>();
    for (const [name, c] of this.counters) counters.set(name, c.value);
    if (options.countersMade !== true) {
      for (const key of this.configured) {
        if (this.ruleStats.has(key)) continue;
        const base = ruleStatBase(key);
        for (const suffix of Object.values(RULE_STAT_SUFFIXES)) counters.set(base + suffix, 0);
      }
    }
    const gauges = new Map<string, number>();
    for (const [key, g] of this.gauges) gauges.set(key, g.value);
    return { counters, gauges };
  }

  /** Every gauge with its tags, for the flusher; call snapshot() first to refresh generated ones. */
  allGauges(): Iterable<Gauge> {
    return this.gauges.values();
  }

  /** Every timer, for sinks to drain. */
  allTimers(): Iterable<ReservoirTimer> {
    return this.timers.values();
  }
}
