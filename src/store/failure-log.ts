// A backend's failures told in a few log lines, never one per request: a line when a server goes
// away (its address and why), at most one summary per interval while it stays away, a line when
// it returns (how long it was away, how many requests failed), and other failures at most once
// per interval with their count.
import type { Clock } from '../lib/clock';
import type { Logger } from '../lib/logger';
import type { BackendName } from './counter-store';
import type { StoreError } from './errors';

/** The longest a failing backend goes without a line about it while requests keep failing. */
export const FAILURE_SUMMARY_INTERVAL_MS = 10_000;

interface Outage {
  readonly sinceMs: number;
  cause: string;
  failed: number;
  lastLineMs: number;
}

/** Failures that are not an outage (a server's error reply, a timeout) since the last line. */
interface Unanswered {
  count: number;
  lastLineMs: number;
}

const NEVER = -Infinity;

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

export class FailureLog {
  private readonly outages = new Map<string, Outage>();
  private unanswered: Unanswered | undefined;

  constructor(
    private readonly backend: BackendName,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly intervalMs = FAILURE_SUMMARY_INTERVAL_MS,
  ) {}

  /** Whether the server at `address` is away, as far as this log was told. */
  isDown(address: string): boolean {
    return this.outages.has(address);
  }

  /** Why the server at `address` is away; undefined while it is not. */
  causeOf(address: string): string | undefined {
    return this.outages.get(address)?.cause;
  }

  /**
   * The server at `address` cannot be reached, because of `cause`. The first call of an outage
   * logs it; later ones only keep the newest cause for the summaries and callers' errors.
   */
  down(address: string, cause: string): void {
    const outage = this.outages.get(address);
    if (outage !== undefined) {
      outage.cause = cause;
      return;
    }
    const nowMs = this.clock.nowMs();
    this.outages.set(address, { sinceMs: nowMs, cause, failed: 0, lastLineMs: nowMs });
    this.logger.error(`${this.backend} backend unreachable (${address}): ${cause}`, {
      backend: this.backend,
      address,
      cause,
    });
  }

  /** The server at `address` answers again: one line with the outage's length and its count. */
  up(address: string): void {
    const outage = this.outages.get(address);
    if (outage === undefined) return;
    this.outages.delete(address);
    const outageMs = this.clock.nowMs() - outage.sinceMs;
    this.logger.warn(
      `${this.backend} backend reachable again (${address}) after ${seconds(outageMs)} s; ${outage.failed} requests failed meanwhile`,
      { backend: this.backend, address, outageMs, failedRequests: outage.failed },
    );
  }

  /**
   * Counts one failed request. An unreachable server's failure counts toward its outage (one is
   * started if none is known); any other failure toward the next summary of failures.
   */
  requestFailed(err: StoreError): void {
    const address = err.unreachable;
    if (address === undefined) {
      this.failedOtherwise(err);
      return;
    }
    if (!this.outages.has(address)) this.down(address, err.reason);
    const outage = this.outages.get(address);
    if (outage === undefined) return;
    outage.failed += 1;
    const nowMs = this.clock.nowMs();
    if (nowMs - outage.lastLineMs < this.intervalMs) return;
    outage.lastLineMs = nowMs;
    this.logger.warn(
      `${this.backend} backend still unreachable (${address}) after ${seconds(nowMs - outage.sinceMs)} s: ${outage.cause}; ${outage.failed} requests failed so far`,
      { backend: this.backend, address, cause: outage.cause, failedRequests: outage.failed },
    );
  }

  /** The first such failure is logged as it is; later ones summed up once per interval. */
  private failedOtherwise(err: StoreError): void {
    const nowMs = this.clock.nowMs();
    const unanswered = (this.unanswered ??= { count: 0, lastLineMs: NEVER });
    unanswered.count += 1;
    const sinceMs = nowMs - unanswered.lastLineMs;
    if (sinceMs < this.intervalMs) return;
    const fields = { backend: this.backend, failedRequests: unanswered.count, error: err.message };
    if (unanswered.lastLineMs === NEVER || unanswered.count === 1)
      this.logger.warn(err.message, fields);
    else {
      this.logger.warn(
        `${this.backend} backend: ${unanswered.count} requests failed in the last ${seconds(sinceMs)} s; the latest: ${err.reason}`,
        fields,
      );
    }
    this.unanswered = { count: 0, lastLineMs: nowMs };
  }
}
