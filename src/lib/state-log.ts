// Logs a retried condition once per change of state, not once per attempt.
import type { LogFields, Logger } from './logger';

/**
 * Something retried until it works (a connection at start-up, a stream, a socket): its first
 * failure is a warning, and so is a failure for a different reason; the same failure again is
 * only a debug line; the first success after failures is one info line.
 */
export class StateLog {
  /** The reason of the last failure logged as a warning; undefined while things work. */
  private failingFor: string | undefined;

  constructor(private readonly logger: Logger) {}

  /** True while the last outcome reported was a failure. */
  get isFailing(): boolean {
    return this.failingFor !== undefined;
  }

  /** A failed attempt; `reason` tells one state of failure from another. */
  failed(message: string, reason: string, fields?: LogFields): void {
    if (this.failingFor === reason) {
      this.logger.debug(message, fields);
      return;
    }
    this.failingFor = reason;
    this.logger.warn(message, fields);
  }

  /** A success; logged (at info) only when it ends failures. Returns whether it did. */
  succeeded(message: string, fields?: LogFields): boolean {
    if (this.failingFor === undefined) return false;
    this.failingFor = undefined;
    this.logger.info(message, fields);
    return true;
  }
}
