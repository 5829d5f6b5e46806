// The statistics registry: counters, gauges and timers by name, and the snapshot sinks read.
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

/** Every statistic by name; disabled, it hands out no-op handles and keeps nothing. */
export class MetricRegistry {
  private readonly counters = new Map<string, Counter>();
  private readonly gauges = new Map<string, LastValueGauge>();
  private readonly timers = new Map<string, ReservoirTimer>();
  private readonly timerObservers: ((name: string) => TimerObserver | undefined)[] = [];
  private readonly generators: (() => void)[] = [];
  /** Gauges removed since the flusher last asked, so that sinks can drop their series. */
  private removedGauges: Gauge[] = [];

  constructor(readonly isEnabled: boolean) {}

  counter(name: string): Counter {
    let counter = this.counters.get(name);
    if (counter === undefined) {
      counter = this.isEnabled ? new SummingCounter(name) : new NullCounter(name);
      if (this.isEnabled) this.counters.set(name, counter);
    }
    return counter;
  }

  /** The counter of a name if it exists; none is made. */
  existingCounter(name: string): Counter | undefined {
    return this.counters.get(name);
  }

  /** Forgets a counter: it is no longer listed, and a later counter(name) starts at 0. */
  removeCounter(name: string): void {
    this.counters.delete(name);
  }

  gauge(name: string, tags: StatTags): Gauge {
    const key = name + nameTagSuffix(tags);
    let gauge = this.gauges.get(key);
    if (gauge === undefined) {
      gauge = new LastValueGauge(name, tags);
      if (this.isEnabled) this.gauges.set(key, gauge);
    }
    return gauge;
  }

  /** Forgets a gauge of a name and tags: it is no longer listed or flushed. */
  removeGauge(name: string, tags: StatTags): void {
    const key = name + nameTagSuffix(tags);
    const gauge = this.gauges.get(key);
    if (gauge === undefined) return;
    this.gauges.delete(key);
    this.removedGauges.push(gauge);
  }

  /** The gauges removed since the last call. */
  takeRemovedGauges(): Gauge[] {
    const removed = this.removedGauges;
    this.removedGauges = [];
    return removed;
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

  observeTimers(factory: (name: string) => TimerObserver | undefined): void {
    this.timerObservers.push(factory);
    for (const timer of this.timers.values()) {
      const observer = factory(timer.name);
      if (observer !== undefined) timer.observe(observer);
    }
  }

  addGenerator(generate: () => void): void {
    if (this.isEnabled) this.generators.push(generate);
  }

  /** Runs the generators, then reads every counter and gauge. */
  values(): { counters: Map<string, number>; gauges: Map<string, number> } {
    for (const generate of this.generators) generate();
    const counters = new Map<string, number>();
    for (const [name, c] of this.counters) counters.set(name, c.value);
    const gauges = new Map<string, number>();
    for (const [key, g] of this.gauges) gauges.set(key, g.value);
    return { counters, gauges };
  }

  allGauges(): Iterable<Gauge> {
    return this.gauges.values();
  }

  allTimers(): Iterable<ReservoirTimer> {
    return this.timers.values();
  }
}
