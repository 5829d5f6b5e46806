// Streams and connections the server ends to protect the other clients: a counter per reason
// (ratelimit.server.refused.<reason>) and a warning per reason at most once a minute, so that a
// client repeating the offence thousands of times costs one log line, not thousands.
import type { Logger } from '../../lib/logger';
import { STAT, type Counter, type StatsStore } from '../../stats';

/** Why the server ended a stream or a connection; the counter's last segment. */
export type RefusalReason =
  'message_deadline' | 'first_message_deadline' | 'slow_reader' | 'unsent_share';

/** A reason's warning is written again at most this often. */
const LOG_EVERY_MS = 60_000;

interface ReasonState {
  readonly counter: Counter;
  /** When its warning was last written (performance.now()), -Infinity before. */
  loggedAtMs: number;
  /** Refusals since then, told with the next warning. */
  unlogged: number;
}

export class Refusals {
  private readonly reasons = new Map<RefusalReason, ReasonState>();

  constructor(
    private readonly stats: StatsStore,
    private readonly logger: Logger,
  ) {}

  /** Counts a refusal for `reason`; warns with `message` unless it did within the minute. */
  note(reason: RefusalReason, message: string, peer: string): void {
    let state = this.reasons.get(reason);
    if (state === undefined) {
      state = {
        counter: this.stats.counter(STAT.serverRefused(reason)),
        loggedAtMs: -Infinity,
        unlogged: 0,
      };
      this.reasons.set(reason, state);
    }
    state.counter.inc();
    state.unlogged += 1;
    const now = performance.now();
    if (now - state.loggedAtMs < LOG_EVERY_MS) return;
    this.logger.warn(message, { reason, peer, refusals: state.unlogged });
    state.loggedAtMs = now;
    state.unlogged = 0;
  }
}
