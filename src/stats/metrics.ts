// The statistics themselves: counters, gauges and timers, and the no-op ones of disabled statistics.

/** Fixed tags of a statistic, such as the version of `ratelimit.build_info`. */
export type StatTags = Readonly<Record<string, string>>;

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
  /** Tags this gauge always carries; sinks write them as they write EXTRA_TAGS. */
  readonly tags: StatTags;
  set(value: number): void;
  readonly value: number;
}

/** A distribution of durations in milliseconds. */
export interface Timer {
  readonly name: string;
  record(ms: number): void;
}

/** Receives every sample of one timer as it is recorded (the Prometheus histogram). */
export type TimerObserver = (ms: number) => void;

export class SummingCounter implements Counter {
  value = 0;
  constructor(readonly name: string) {}
  add(amount: number): void {
    this.value += amount;
  }
  inc(): void {
    this.value += 1;
  }
}

export class NullCounter implements Counter {
  readonly value = 0;
  constructor(readonly name: string) {}
  add(): void {
    /* statistics are disabled */
  }
  inc(): void {
    /* statistics are disabled */
  }
}

export class LastValueGauge implements Gauge {
  value = 0;
  constructor(
    readonly name: string,
    readonly tags: StatTags,
  ) {}
  set(value: number): void {
    this.value = value;
  }
}

export class NullTimer implements Timer {
  constructor(readonly name: string) {}
  record(): void {
    /* statistics are disabled */
  }
}

/** Timer samples kept between flushes; past the cap, samples are thinned and the rate recorded. */
const TIMER_SAMPLE_CAP = 2048;

export class ReservoirTimer implements Timer {
  private samples: number[] = [];
  private seen = 0;
  private observers: TimerObserver[] = [];

  constructor(readonly name: string) {}

  record(ms: number): void {
    for (const observe of this.observers) observe(ms);
    this.seen += 1;
    if (this.samples.length < TIMER_SAMPLE_CAP) {
      this.samples.push(ms);
      return;
    }
    // Reservoir sampling keeps a uniform sample of the interval in bounded memory.
    const slot = Math.floor(Math.random() * this.seen);
    if (slot < TIMER_SAMPLE_CAP) this.samples[slot] = ms;
  }

  observe(observer: TimerObserver): void {
    this.observers = [...this.observers, observer];
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
