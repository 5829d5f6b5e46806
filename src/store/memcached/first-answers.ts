// Waits in the background for each memcached server of the first list to answer once, so the
// service can report not-ready until then; the wait is logged once per change of state.
import { performance } from 'node:perf_hooks';
import { backOff } from 'exponential-backoff';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { StateLog } from '../../lib/state-log';
import { connectionFailure } from '../connection-words';
import { MemcachedIoError } from './connection';
import type { ServerPool } from './server-pool';

/**
 * Waits between probes of a server not answering yet: doubling from the first to the longest,
 * where they stay, for ever. The longest bounds how long the service stays unready after
 * memcached appears (each probe also waits at most MEMCACHE_TIMEOUT for its answer).
 */
export const FIRST_ANSWER_BACKOFF = Object.freeze({ initialMs: 250, maxMs: 2000 });

interface Wait {
  readonly log: StateLog;
  /** On the monotonic clock: the backoff's timers run there. */
  readonly sinceMs: number;
}

/** A probe's failure in an operator's words; the same words for the same failure. */
function reasonOf(err: unknown): string {
  if (err instanceof MemcachedIoError && err.failure === 'connection') {
    return connectionFailure(err.cause ?? err);
  }
  return describeError(err);
}

/** The servers of the first list that have not answered yet, each probed until it does. */
export class FirstAnswers {
  private readonly waiting = new Map<string, Wait>();
  private isStopped = false;

  constructor(private readonly logger: Logger) {}

  /** Whether the server at `address` is one of the first list's and has never answered. */
  isWaitingFor(address: string): boolean {
    return this.waiting.has(address);
  }

  /**
   * Probes each pool not up yet with a no-op; resolves once each first probe has settled (within
   * MEMCACHE_TIMEOUT), so servers already up count as connected when the store opens. A server
   * that did not answer is probed again in the background until it does, or stop().
   */
  async start(pools: readonly ServerPool[]): Promise<void> {
    const first = pools.map(async (pool) => {
      if (pool.isUp || this.waiting.has(pool.address)) return;
      this.waiting.set(pool.address, {
        log: new StateLog(this.logger),
        sinceMs: performance.now(),
      });
      try {
        await pool.probe();
      } catch (err: unknown) {
        if (this.attemptFailed(pool, err, 1)) void this.retry(pool);
      }
    });
    await Promise.all(first);
  }

  /**
   * The server at `address` answered (a probe or a request): its wait ends, with one info line
   * when a warning said it was not answering. Returns whether the server was being waited for.
   */
  answered(address: string): boolean {
    const wait = this.waiting.get(address);
    if (wait === undefined) return false;
    this.waiting.delete(address);
    wait.log.succeeded('memcached answers; its wait at start-up is over', {
      server: address,
      waitedMs: Math.round(performance.now() - wait.sinceMs),
    });
    return true;
  }

  /** Ends the probing (the store closes); a probe under way fails as its connection closes. */
  stop(): void {
    this.isStopped = true;
    this.waiting.clear();
  }

  /** Logs a failed probe (a warning per new reason); returns whether to try again. */
  private attemptFailed(pool: ServerPool, err: unknown, attempt: number): boolean {
    const wait = this.waiting.get(pool.address);
    if (this.isStopped || wait === undefined) return false;
    // A pool closes when an SRV refresh drops its server: nothing is left to wait for.
    if (err instanceof MemcachedIoError && err.failure === 'closed') {
      this.waiting.delete(pool.address);
      return false;
    }
    const error = reasonOf(err);
    wait.log.failed('memcached is not answering yet; not ready until it does, retrying', error, {
      server: pool.address,
      attempt,
      error,
    });
    return true;
  }

  /** The probes after the first, each after a longer wait, until one is answered. */
  private async retry(pool: ServerPool): Promise<void> {
    try {
      await backOff(() => pool.probe(), {
        delayFirstAttempt: true,
        startingDelay: FIRST_ANSWER_BACKOFF.initialMs,
        maxDelay: FIRST_ANSWER_BACKOFF.maxMs,
        numOfAttempts: Number.MAX_SAFE_INTEGER,
        timeMultiple: 2,
        jitter: 'none',
        // backOff numbers its own attempts; the first probe came before them.
        retry: (err: unknown, attempt: number) => this.attemptFailed(pool, err, attempt + 1),
      });
    } catch {
      // Stopped, or a request found the server answering meanwhile: nothing is left to wait for.
    }
  }
}
