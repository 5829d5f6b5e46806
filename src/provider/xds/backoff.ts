// Reconnection delays of the xDS client: exponential, capped, randomised, reset by messages.
// Not the exponential-backoff package the Redis start-up uses: it runs its own retry loop and
// timer around one promise, while this client's attempts are reset by a message on a stream
// that stays open, spread by ±XDS_CLIENT_BACKOFF_RANDOM_FACTOR with a random source tests pin.
import type { BackoffSettings } from '../../settings';

/** Multiplier between consecutive delays; gRPC's own connection backoff uses 1.6, Go's 1.5-2. */
const MULTIPLIER = 2;

/**
 * Delays for reconnecting: the first is `initialIntervalMs`, each next one doubles up to
 * `maxIntervalMs` (where later retries stay), and with jitter each is spread uniformly over
 * ±randomFactor of itself. reset() starts over.
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

/**
 * When to reopen the stream. Until the server has answered once, every CONFIG_GRPC_XDS_SERVER_
 * CONNECT_RETRY_INTERVAL (spread by half, as the reference's linear retry is); after that the
 * exponential Backoff, which starts over whenever a message arrives, not merely when a stream
 * opens, so a server that accepts streams and drops them is still backed off from.
 */
export class ReconnectDelays {
  private hasAnswered = false;
  private readonly backoff: Backoff;

  constructor(
    backoff: BackoffSettings,
    private readonly connectRetryIntervalMs: number,
    private readonly random: () => number = Math.random,
  ) {
    this.backoff = new Backoff(backoff, random);
  }

  /** True once the server has sent a message. */
  get hasServerAnswered(): boolean {
    return this.hasAnswered;
  }

  /** A message arrived: the server is up, and the next failure backs off from the start. */
  onMessage(): void {
    this.hasAnswered = true;
    this.backoff.reset();
  }

  /** The wait before the next attempt. */
  next(): number {
    if (this.hasAnswered) return this.backoff.next();
    return this.connectRetryIntervalMs * (0.5 + this.random());
  }
}
