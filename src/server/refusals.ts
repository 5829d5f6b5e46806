// What the process-wide bounds refused: a counter per reason, and a log line per peer at most
// once a minute, so that a client refused thousands of times a second costs one line.
import type { BudgetRefusal } from './h2';
import type { Logger } from '../lib/logger';
import { STAT, type Counter, type StatsStore } from '../stats';

/** Why a connection was refused or closed at accept. */
export type ConnectionRefusal = 'connections_total' | 'connections_per_peer';

/** Why the server ended a stream or a connection that held what other clients need. */
export type StreamRefusal =
  'message_deadline' | 'first_message_deadline' | 'slow_reader' | 'unsent_share';

export type RefusalReason = ConnectionRefusal | BudgetRefusal | StreamRefusal;

/** Every reason, in the order the status page lists them. */
export const REFUSAL_REASONS: readonly RefusalReason[] = Object.freeze([
  'connections_total',
  'connections_per_peer',
  'requests_total',
  'requests_per_peer',
  'requests_per_connection',
  'buffered_bytes_total',
  'buffered_bytes_per_peer',
  'buffered_bytes_per_connection',
  'message_deadline',
  'first_message_deadline',
  'slow_reader',
  'unsent_share',
]);

/** A peer is named in the log at most this often. */
const LOG_EVERY_MS = 60_000;
/** Peers remembered for the once-a-minute rule; past it the memory starts again. */
const MAX_LOGGED_PEERS = 10_000;

interface Logged {
  atMs: number;
  /** Refusals of this peer since its last line. */
  since: number;
}

export class Refusals {
  private readonly counters: Readonly<Record<RefusalReason, Counter>>;
  private readonly logged = new Map<string, Logged>();

  constructor(
    stats: StatsStore,
    private readonly logger: Logger,
  ) {
    // Bound when the listeners open, so that /stats lists every reason at 0 from the start.
    this.counters = Object.fromEntries(
      REFUSAL_REASONS.map((reason) => [reason, stats.counter(STAT.refused(reason))]),
    ) as Record<RefusalReason, Counter>;
  }

  /** Counts a refusal of `peer` (an address) for `reason`; logs it unless the peer was lately. */
  readonly refuse = (reason: RefusalReason, peer: string): void => {
    this.note(reason, 'refused a client past a bound of the service', peer);
  };

  /** As refuse(), with the words of the line: what was ended, and why. */
  note(reason: RefusalReason, message: string, peer: string): void {
    this.counters[reason].inc();
    const now = performance.now();
    const last = this.logged.get(peer);
    if (last !== undefined && now - last.atMs < LOG_EVERY_MS) {
      last.since += 1;
      return;
    }
    if (last === undefined && this.logged.size >= MAX_LOGGED_PEERS) this.logged.clear();
    this.logger.warn(message, {
      peer,
      reason,
      refusedSinceLastLine: last?.since ?? 0,
      statistic: STAT.refused(reason),
    });
    this.logged.set(peer, { atMs: now, since: 0 });
  }
}
