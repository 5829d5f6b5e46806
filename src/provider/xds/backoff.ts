// Reconnection delays of the xDS client: exponential, capped, randomised.
import type { BackoffSettings } from '../../settings';

/** Multiplier between consecutive delays; gRPC's own connection backoff uses 1.6, Go's 1.5-2. */
const MULTIPLIER = 2;

/**
 * Delays for reconnecting: the first is `initialIntervalMs`, each next one doubles up to
 * `maxIntervalMs` (where later retries stay), and with jitter each is spread uniformly over
 * ±randomFactor of itself. reset() starts over; the client calls it once a stream delivers a
 * message, not merely when it opens, so a server that accepts and drops streams still backs off.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly settings: BackoffSettings,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const base = Math.min(
      this.settings.initialIntervalMs * MULTIPLIER ** this.attempt,
      this.settings.maxIntervalMs,
    );
    if (base < this.settings.maxIntervalMs) this.attempt += 1;
    if (!this.settings.jitter || this.settings.randomFactor === 0) return base;
    // Factors above 1 come from the reference, which reads the setting as the multiplier;
    // here they spread the delay over its whole range (0 to twice itself) at most.
    const spread = base * Math.min(this.settings.randomFactor, 1);
    return base - spread + this.random() * 2 * spread;
  }

  reset(): void {
    this.attempt = 0;
  }
}
