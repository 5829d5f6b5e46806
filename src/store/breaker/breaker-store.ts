// A counter store behind a circuit breaker: one backend instance that answers at once while it hangs.
import type { Clock } from '../../lib/clock';
import type { Logger } from '../../lib/logger';
import type { Pending } from '../../lib/pending';
import type { BreakerSettings } from '../../settings';
import { STAT, type Counter, type Gauge, type StatsStore } from '../../stats';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { StoreError } from '../errors';
import { MemoryCounterStore } from '../memory/memory-store';
import { openAnswers, type OpenAnswers } from './answers';
import { CircuitBreaker, type Admission, type BreakerState } from './circuit-breaker';
import { LocalShare } from './local-share';

/** What a breaker needs besides its settings. */
export interface BreakerDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stats: StatsStore;
  /** Told each change of an instance's breaker, for /healthcheck/components and health. */
  readonly report: (instance: string, state: BreakerState) => void;
}

const STATE_VALUE: Readonly<Record<BreakerState, number>> = { closed: 0, open: 1, probing: 2 };

/**
 * Every call goes through the instance's breaker. A transient StoreError (a timeout, a lost
 * connection) is a failure; a reply error is not, the backend having answered. While the breaker
 * is open, calls get BACKEND_FAILURE_MODE's answer at once: an error, OK, OVER_LIMIT, or the
 * local count.
 */
export class BreakerStore implements CounterStore {
  readonly backend: CounterStore['backend'];
  readonly unsupported: CounterStore['unsupported'];
  private readonly breaker: CircuitBreaker;
  private readonly answers: OpenAnswers;
  private readonly local: MemoryCounterStore | undefined;
  private readonly counters: { probes: Counter; answered: Counter; opened: Counter };

  constructor(
    private readonly inner: CounterStore,
    readonly instance: string,
    settings: BreakerSettings,
    deps: BreakerDeps,
  ) {
    this.backend = inner.backend;
    this.unsupported = inner.unsupported;
    const stat = (name: string): string => STAT.breaker(instance, name);
    this.counters = {
      opened: deps.stats.counter(stat('opened')),
      probes: deps.stats.counter(stat('probes')),
      answered: deps.stats.counter(stat(`answered_${settings.mode}`)),
    };
    const gauge: Gauge = deps.stats.gauge(stat('state'));
    this.local =
      settings.mode === 'local' ? new MemoryCounterStore({ clock: deps.clock }) : undefined;
    this.answers = openAnswers(
      settings.mode,
      inner.backend,
      instance,
      this.local === undefined ? undefined : new LocalShare(this.local, settings.localShare),
    );
    deps.report(instance, 'closed');
    this.breaker = new CircuitBreaker({
      threshold: settings.threshold,
      cooldownMs: settings.cooldownMs,
      clock: deps.clock,
      onChange: (state) => {
        gauge.set(STATE_VALUE[state]);
        if (state === 'open') this.counters.opened.inc();
        if (state === 'probing') this.counters.probes.inc();
        const message = `circuit breaker of ${instance} is ${state}`;
        if (state === 'open') deps.logger.error(message, { mode: settings.mode });
        else deps.logger.info(message, { mode: settings.mode });
        deps.report(instance, state);
      },
    });
  }

  get state(): BreakerState {
    return this.breaker.state;
  }

  private async guarded<T>(call: () => Pending<T>, answer: () => Promise<T>): Promise<T> {
    const admission: Admission = this.breaker.admit();
    if (admission === 'open') {
      this.counters.answered.inc();
      return answer();
    }
    try {
      const value = await call();
      this.breaker.succeeded(admission);
      return value;
    } catch (err: unknown) {
      if (!(err instanceof StoreError) || err.isTransient) this.breaker.failed(admission);
      else this.breaker.succeeded(admission);
      throw err;
    }
  }

  increment(batch: readonly CounterIncrement[]): Promise<number[]> {
    return this.guarded(
      () => this.inner.increment(batch),
      () => this.answers.increment(batch),
    );
  }

  read(keys: readonly CounterRead[]): Promise<number[]> {
    return this.guarded(
      () => this.inner.read(keys),
      () => this.answers.read(keys),
    );
  }

  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]> {
    return this.guarded(
      () => this.inner.slidingWindow(batch),
      () => this.answers.slidingWindow(batch),
    );
  }

  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]> {
    return this.guarded(
      () => this.inner.tokenBucket(batch),
      () => this.answers.tokenBucket(batch),
    );
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  onConnectionChange(listener: (isConnected: boolean) => void): void {
    this.inner.onConnectionChange(listener);
  }

  async close(): Promise<void> {
    await this.local?.close();
    await this.inner.close();
  }
}

/** Wraps one backend instance in its breaker, or hands it back when breakers are off. */
export type InstanceGuard = (store: CounterStore, instance: string) => CounterStore;

/** The guard BACKEND_FAILURE_* asks for: a breaker per instance, or none when the threshold is 0. */
export function breakerGuard(settings: BreakerSettings, deps: BreakerDeps): InstanceGuard {
  if (settings.threshold === 0) return (store) => store;
  return (store, instance) => new BreakerStore(store, instance, settings, deps);
}
