// Flushes the stats store into every sink each STATS_FLUSH_INTERVAL, and once more on close.
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { StatsSink } from './sink';
import type { StatsStore } from './store';

/**
 * Periodic flushes in a row a key built from request values must sit idle before it is
 * released: a minute with the default STATS_FLUSH_INTERVAL, so that keys in occasional use do
 * not flap in and out of the sinks.
 */
const IDLE_FLUSHES_BEFORE_RELEASE = 6;

/**
 * One flusher serves every sink, so counter deltas and timer samples are taken once per flush
 * and every sink sees the same numbers.
 */
export class StatsFlusher {
  private readonly lastCounters = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: StatsStore,
    private readonly sinks: readonly StatsSink[],
    private readonly logger: Logger,
  ) {}

  /** Starts periodic flushing; the timer does not keep the process alive. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.flush()
        .then(() => {
          this.releaseIdle();
        })
        .catch((err: unknown) => {
          this.logger.warn('statistics flush failed', { error: describeError(err) });
        });
    }, intervalMs);
    this.timer.unref();
  }

  /** Sends every changed counter as a delta, every gauge, and every timer sample. */
  async flush(): Promise<void> {
    // Counters never made are at 0, and a counter at 0 is not sent.
    const { counters } = this.store.snapshot({ countersMade: true });
    for (const [name, value] of counters) {
      const delta = value - (this.lastCounters.get(name) ?? 0);
      if (delta === 0) continue;
      for (const sink of this.sinks) sink.counter(name, delta);
      this.lastCounters.set(name, value);
    }
    for (const gauge of this.store.takeRemovedGauges())
      for (const sink of this.sinks) sink.releaseGauge?.(gauge.name, gauge.tags);
    for (const gauge of this.store.allGauges())
      for (const sink of this.sinks) sink.gauge(gauge.name, gauge.value, gauge.tags);
    for (const timer of this.store.allTimers()) {
      const { samples, sampleRate } = timer.drain();
      for (const ms of samples)
        for (const sink of this.sinks) sink.timing(timer.name, ms, sampleRate);
    }
    await Promise.all(this.sinks.map((sink) => sink.flush()));
  }

  /** Releases idle keys built from request values, after their last counts went out. */
  releaseIdle(): void {
    const released = this.store.releaseIdle(IDLE_FLUSHES_BEFORE_RELEASE);
    if (released.length === 0) return;
    for (const name of released) this.lastCounters.delete(name);
    for (const sink of this.sinks) sink.release?.(released);
  }

  /** Stops the timer and flushes one last time, so nothing counted is lost. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    await Promise.all(this.sinks.map((sink) => sink.close()));
  }
}
