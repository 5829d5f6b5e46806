// In-process statistics: counters, gauges and timers by name, with handles bound once and reused.
import { RULE_SCOPE, RULE_STAT_SUFFIXES, sanitizeStatName } from './names';

/** A monotonically increasing count; sinks send the change since the last flush. */
export interface Counter {
  readonly name: string;
  add(amount: number): void;
  inc(): void;
  readonly value: number;
}

/** A value that is set, not accumulated. */
export interface Gauge {
  readonly name: string;
  set(value: number): void;
  readonly value: number;
}

/** A distribution of durations in milliseconds. */
export interface Timer {
  readonly name: string;
  record(ms: number): void;
}

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
  /** The handles for a rule key such as `domain.key_value`; the same key gives the same handles. */
  forRule(key: string): RuleStats;
}

class CounterImpl implements Counter {
  value = 0;
  constructor(readonly name: string) {}
  add(amount: number): void {
    this.value += amount;
  }
  inc(): void {
    this.value += 1;
  }
}

class NullCounter implements Counter {
  readonly value = 0;
  constructor(readonly name: string) {}
  add(): void {
    /* statistics are disabled */
  }
  inc(): void {
    /* statistics are disabled */
  }
}

class GaugeImpl implements Gauge {
  value = 0;
  constructor(readonly name: string) {}
  set(value: number): void {
    this.value = value;
  }
}

/** Timer samples kept between flushes; past the cap, samples are thinned and the rate recorded. */
const TIMER_SAMPLE_CAP = 2048;

export class TimerImpl implements Timer {
  private samples: number[] = [];
  private seen = 0;
  constructor(readonly name: string) {}

  record(ms: number): void {
    this.seen += 1;
    if (this.samples.length < TIMER_SAMPLE_CAP) {
      this.samples.push(ms);
      return;
    }
    // Reservoir sampling keeps a uniform sample of the interval in bounded memory.
    const slot = Math.floor(Math.random() * this.seen);
    if (slot < TIMER_SAMPLE_CAP) this.samples[slot] = ms;
  }

  /** Takes the samples recorded since the last drain and the fraction of samples kept. */
  drain(): { samples: number[]; sampleRate: number } {
    const samples = this.samples;
    const sampleRate = this.seen === 0 ? 1 : samples.length / this.seen;
    this.samples = [];
    this.seen = 0;
    return { samples, sampleRate };
  }
}

/** A snapshot of every statistic, as sinks and /stats see it. */
export interface StatsSnapshot {
  readonly counters: ReadonlyMap<string, number>;
  readonly gauges: ReadonlyMap<string, number>;
}

/** The process-wide statistics registry. */
export class StatsStore implements RuleStatsFactory {
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, GaugeImpl>();
  private readonly timers = new Map<string, TimerImpl>();
  private readonly ruleStats = new Map<string, RuleStats>();

  private readonly nullRuleStats: RuleStats;

  /** @param isEnabled false makes every handle a no-op (DISABLE_STATS). */
  constructor(readonly isEnabled: boolean = true) {
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
  }

  counter(name: string): Counter {
    let counter = this.counters.get(name);
    if (counter === undefined) {
      counter = this.isEnabled ? new CounterImpl(name) : new NullCounter(name);
      if (this.isEnabled) this.counters.set(name, counter);
    }
    return counter;
  }

  gauge(name: string): Gauge {
    let gauge = this.gauges.get(name);
    if (gauge === undefined) {
      gauge = new GaugeImpl(name);
      if (this.isEnabled) this.gauges.set(name, gauge);
    }
    return gauge;
  }

  timer(name: string): Timer {
    let timer = this.timers.get(name);
    if (timer === undefined) {
      timer = new TimerImpl(name);
      if (this.isEnabled) this.timers.set(name, timer);
    }
    return timer;
  }

  forRule(key: string): RuleStats {
    if (!this.isEnabled) return this.nullRuleStats;
    let stats = this.ruleStats.get(key);
    if (stats !== undefined) return stats;
    const base = `${RULE_SCOPE}.${sanitizeStatName(key)}.`;
    const s = RULE_STAT_SUFFIXES;
    stats = Object.freeze({
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

  /** Current values of every counter and gauge. */
  snapshot(): StatsSnapshot {
    const counters = new Map<string, number>();
    for (const [name, c] of this.counters) counters.set(name, c.value);
    const gauges = new Map<string, number>();
    for (const [name, g] of this.gauges) gauges.set(name, g.value);
    return { counters, gauges };
  }

  /** Every timer, for sinks to drain. */
  allTimers(): Iterable<TimerImpl> {
    return this.timers.values();
  }
}
