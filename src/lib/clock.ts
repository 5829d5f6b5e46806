// Time source injected everywhere, so that tests drive time instead of sleeping.

/** A source of wall-clock time. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
}

/** The real wall clock. */
export const systemClock: Clock = Object.freeze({ nowMs: () => Date.now() });

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private ms: number = 0) {}

  nowMs(): number {
    return this.ms;
  }

  /** Sets the time to `ms` milliseconds since the epoch. */
  set(ms: number): void {
    this.ms = ms;
  }

  /** Moves the time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }
}
