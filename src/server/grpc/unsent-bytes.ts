// Bytes written to connections and not yet taken by their clients, bounded per connection and
// in total, for the messages the server starts on its own (RLQS assignments): flow control
// windows say what a client may be sent, not what it reads, and a client that opens its windows
// and never reads its socket would otherwise have the process queue for it without end.
import { ErrorCode, type H2Connection } from '../h2';
import type { Refusals } from '../refusals';
import { TimeoutQueue, type Waiting } from './timeout-queue';

/** The bounds (GRPC_MAX_UNSENT_BYTES_PER_CONNECTION, GRPC_MAX_UNSENT_BYTES, GRPC_UNSENT_TIMEOUT). */
export interface UnsentLimits {
  readonly maxUnsentBytesPerConnection: number;
  readonly maxUnsentBytes: number;
  readonly unsentTimeoutMs: number;
}

/**
 * Below this a connection is not followed: what a client reading at its own pace has in flight.
 * Such connections hold at most this each; reading from a connection stops while a MiB waits
 * for it (h2/session.ts), so its answers to calls cannot pile up either.
 */
const FOLLOWED_BYTES = 64 * 1024;
/**
 * A connection may hold this fraction of the total, as in the buffer budget (h2/buffer-budget.ts):
 * when the total is reached, a connection past its share is cut first.
 */
const CONNECTION_SHARE = 32;

/** A connection with bytes waiting for its client, and the streams waiting to write to it. */
class Backlog implements Waiting {
  dueMs = 0;
  queuedAt = -1;
  /** Unsent bytes when last looked at. */
  bytes = 0;
  /** Past its own bound: nothing more is written until it drains. */
  isOver = false;
  /** Told once the connection drains: writers that were refused. */
  readonly waiting = new Set<() => void>();

  constructor(readonly connection: H2Connection) {}
}

export class UnsentBytes {
  private readonly followed = new Map<H2Connection, Backlog>();
  /** The sum of the followed connections' bytes when last looked at. */
  private total = 0;
  private readonly shareBytes: number;
  /** Connections past their own bound, cut when GRPC_UNSENT_TIMEOUT passes without a drain. */
  private readonly overdue: TimeoutQueue<Backlog>;

  constructor(
    private readonly limits: UnsentLimits,
    private readonly refusals: Refusals,
  ) {
    this.shareBytes = Math.floor(limits.maxUnsentBytes / CONNECTION_SHARE);
    this.overdue = new TimeoutQueue<Backlog>(limits.unsentTimeoutMs, (backlog) => {
      this.tooSlow(backlog);
    });
  }

  /** Bytes waiting in all followed connections, as last looked at (for tests and the status). */
  get totalBytes(): number {
    return this.total;
  }

  /**
   * Whether a message the server starts may be written to `connection` now. When not,
   * `retry` is called once the connection has drained (not if it closes).
   */
  mayWrite(connection: H2Connection, retry: () => void): boolean {
    const unsent = connection.unsentBytes;
    const known = this.followed.get(connection);
    if (known === undefined && unsent < FOLLOWED_BYTES && this.total < this.limits.maxUnsentBytes)
      return true;
    const backlog = known ?? this.follow(connection);
    this.look(backlog, unsent);
    if (this.isRefused(backlog)) {
      backlog.waiting.add(retry);
      return false;
    }
    return true;
  }

  /** A message was written to `connection`: what it adds is counted. */
  wrote(connection: H2Connection): void {
    const unsent = connection.unsentBytes;
    const known = this.followed.get(connection);
    if (known === undefined && unsent < FOLLOWED_BYTES) return;
    this.look(known ?? this.follow(connection), unsent);
    if (this.total > this.limits.maxUnsentBytes) this.cutPastShare();
  }

  /** Stops the timer (the server is closing). */
  clear(): void {
    this.overdue.clear();
  }

  private isRefused(backlog: Backlog): boolean {
    if (backlog.isOver) return true;
    if (backlog.bytes > this.limits.maxUnsentBytesPerConnection) {
      backlog.isOver = true;
      this.overdue.add(backlog);
      return true;
    }
    return this.total >= this.limits.maxUnsentBytes;
  }

  private follow(connection: H2Connection): Backlog {
    const backlog = new Backlog(connection);
    this.followed.set(connection, backlog);
    connection.onceDrained(() => {
      this.drained(backlog);
    });
    return backlog;
  }

  private look(backlog: Backlog, unsent: number): void {
    this.total += unsent - backlog.bytes;
    backlog.bytes = unsent;
  }

  /** The client took everything (or the connection closed): the writers refused go on. */
  private drained(backlog: Backlog): void {
    this.overdue.remove(backlog);
    if (this.followed.get(backlog.connection) === backlog) this.followed.delete(backlog.connection);
    this.total -= backlog.bytes;
    backlog.bytes = 0;
    backlog.isOver = false;
    const waiting = [...backlog.waiting];
    backlog.waiting.clear();
    if (backlog.connection.destroyed) return;
    for (const retry of waiting) retry();
  }

  /** GRPC_UNSENT_TIMEOUT passed with the connection past its bound and not drained. */
  private tooSlow(backlog: Backlog): void {
    if (this.followed.get(backlog.connection) !== backlog) return;
    this.cut(
      backlog,
      'slow_reader',
      `a client read nothing of what it was sent for GRPC_UNSENT_TIMEOUT (${String(this.limits.unsentTimeoutMs)} ms) while more than GRPC_MAX_UNSENT_BYTES_PER_CONNECTION waited for it: its connection is closed`,
    );
  }

  /**
   * The total is past GRPC_MAX_UNSENT_BYTES: connections past their share are cut, the one
   * holding most first, until it is back within it; those within their share only wait.
   */
  private cutPastShare(): void {
    while (this.total > this.limits.maxUnsentBytes) {
      let largest: Backlog | undefined;
      for (const backlog of this.followed.values())
        if (backlog.bytes > this.shareBytes && backlog.bytes > (largest?.bytes ?? 0))
          largest = backlog;
      if (largest === undefined) return;
      this.cut(
        largest,
        'unsent_share',
        `unread bytes of all connections passed GRPC_MAX_UNSENT_BYTES (${String(this.limits.maxUnsentBytes)}); the connection holding most past its share is closed`,
      );
    }
  }

  private cut(backlog: Backlog, reason: 'slow_reader' | 'unsent_share', message: string): void {
    const { connection } = backlog;
    this.refusals.note(reason, message, peerOf(connection));
    this.drained(backlog);
    connection.cut(ErrorCode.ENHANCE_YOUR_CALM);
  }
}

/** The peer's address, for the log line. */
export function peerOf(connection: H2Connection): string {
  const socket = (connection as { socket?: { remoteAddress?: string; remotePort?: number } })
    .socket;
  return socket?.remoteAddress === undefined
    ? 'unknown'
    : `${socket.remoteAddress}:${String(socket.remotePort)}`;
}
