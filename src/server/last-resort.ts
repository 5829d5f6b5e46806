// The last resort for errors no code path expected: logged and counted, the request answered
// INTERNAL / 500 by its caller, and the process kept running: one request never takes it down.
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { STAT, type Counter, type StatsStore } from '../stats';

/** Lines logged per second at most; a bug hit by every request must not flood the log. */
const LOG_LINES_PER_SECOND = 10;

export class LastResort {
  private readonly count: Counter;
  private second = 0;
  private loggedThisSecond = 0;
  private suppressed = 0;

  constructor(
    stats: StatsStore,
    private readonly logger: Logger,
  ) {
    this.count = stats.counter(STAT.unexpectedError);
  }

  /** Logs (at most ten lines a second, saying how many were left out) and counts `err`. */
  report(err: unknown, where: string): void {
    this.count.inc();
    const second = Math.floor(performance.now() / 1000);
    if (second !== this.second) {
      this.second = second;
      this.loggedThisSecond = 0;
    }
    if (this.loggedThisSecond >= LOG_LINES_PER_SECOND) {
      this.suppressed += 1;
      return;
    }
    this.loggedThisSecond += 1;
    const stack = err instanceof Error && err.stack !== undefined ? err.stack : undefined;
    this.logger.error(
      'unexpected error; the request is answered INTERNAL and the service goes on',
      {
        where,
        error: describeError(err),
        stack,
        ...(this.suppressed > 0 ? { notLoggedBefore: this.suppressed } : {}),
      },
    );
    this.suppressed = 0;
  }

  /**
   * Runs `work`; an exception it throws is reported and handed to `answer`, which replies to
   * the request (and must not throw itself: a throw there is reported and dropped).
   */
  guard(where: string, work: () => void, answer: () => void): void {
    try {
      work();
    } catch (err: unknown) {
      this.report(err, where);
      try {
        answer();
      } catch (answerErr: unknown) {
        this.report(answerErr, `${where} (answering)`);
      }
    }
  }
}

/**
 * The process's last resort: an exception or rejection nothing handled (a bug in a timer, an
 * event handler outside every request path's own guard) is logged and counted, and the
 * service goes on: one request, or one stray callback, never takes the process down.
 */
export function catchStrayErrors(service: { stats: StatsStore; logger: Logger }): void {
  const lastResort = new LastResort(service.stats, service.logger);
  process.on('uncaughtException', (err) => {
    lastResort.report(err, 'process (uncaught exception)');
  });
  process.on('unhandledRejection', (reason) => {
    lastResort.report(reason, 'process (unhandled rejection)');
  });
}
