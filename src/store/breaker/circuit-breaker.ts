// One backend instance's circuit breaker: closed, open for a cooldown, then one probe decides.
import type { Clock } from '../../lib/clock';

export type BreakerState = 'closed' | 'open' | 'probing';

/** What a call may do: go to the backend, go as the probe, or be answered without it. */
export type Admission = 'call' | 'probe' | 'open';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker (at least 1). */
  readonly threshold: number;
  readonly cooldownMs: number;
  readonly clock: Clock;
  /** Told every change of state. */
  readonly onChange: (state: BreakerState) => void;
}

/**
 * `threshold` consecutive failures open the breaker; while open, calls are answered without the
 * backend. After `cooldownMs` the next call is the probe, alone: its success closes the breaker,
 * its failure opens it for another cooldown. Only the probe's outcome counts while not closed:
 * calls started before the breaker opened decide nothing when they end.
 */
export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private failures = 0;
  private openedAtMs = 0;

  constructor(private readonly options: BreakerOptions) {}

  get state(): BreakerState {
    return this.current;
  }

  admit(): Admission {
    if (this.current === 'closed') return 'call';
    if (this.current === 'probing') return 'open';
    if (this.options.clock.nowMs() - this.openedAtMs < this.options.cooldownMs) return 'open';
    this.set('probing');
    return 'probe';
  }

  succeeded(admission: Admission): void {
    if (admission === 'probe') {
      this.failures = 0;
      this.set('closed');
    } else if (this.current === 'closed') this.failures = 0;
  }

  failed(admission: Admission): void {
    if (admission === 'probe') {
      this.open();
      return;
    }
    if (this.current !== 'closed') return;
    this.failures += 1;
    if (this.failures >= this.options.threshold) this.open();
  }

  private open(): void {
    this.openedAtMs = this.options.clock.nowMs();
    this.set('open');
  }

  private set(state: BreakerState): void {
    if (state === this.current) return;
    this.current = state;
    this.options.onChange(state);
  }
}
