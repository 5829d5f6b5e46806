// One Envoy's RLQS stream: checks its reports, holds the buckets it watches, and sends what is
// due (coalesced per bucket while the peer is not reading) over a small transport interface.
import type { Bucket, Watching } from './bucket';
import type { PeerHold } from './caps';
import type { BucketAction, QuotaStatus, UsageReports } from './messages';
import type { BucketPairs } from './rules';
import {
  checkReports,
  InvalidReport,
  type CheckedReports,
  type RefusedUsage,
  type WireUsageReports,
} from './validate';

/** What the quota service needs of the transport carrying one stream. */
export interface QuotaStreamSink {
  /** Writes one RateLimitQuotaResponse with these actions (at least one). */
  send(actions: readonly BucketAction[]): void;
  /** Ends the stream with a status; called at most once, and nothing is sent after it. */
  end(status: QuotaStatus, message: string): void;
  /**
   * False while the peer has not taken earlier responses: what is due waits, one entry per
   * bucket, so a client that never reads costs at most its buckets.
   */
  canSend(): boolean;
}

/** What a stream needs of the service it belongs to. */
export interface StreamHost {
  nowMs(): number;
  /** Handles a checked report. */
  report(stream: QuotaStream, reports: UsageReports): void;
  /** The stream has something to send; the host flushes it after the current event. */
  markDirty(stream: QuotaStream): void;
  /** The stream is over: its watches end and its shares go back to the others. */
  release(stream: QuotaStream): void;
  /** An action left on the stream (for statistics). */
  noteSent(bucket: Bucket<QuotaStream>, action: BucketAction): void;
  /** A stream ends for a report that breaks the rules. */
  noteInvalid(): void;
  /**
   * Usages of a report were left out (the stream goes on), or, with none, the stream ends for
   * `reason`: told to operators once per stream.
   */
  noteRefused(stream: QuotaStream, reason: string, usages: readonly RefusedUsage[]): void;
  /** Takes `bytes` of the bucket id bytes bound for the stream's id cache; false past it. */
  takeIdBytes(stream: QuotaStream, bytes: number): boolean;
  /** Gives back bytes taken with takeIdBytes. */
  giveIdBytes(stream: QuotaStream, bytes: number): void;
}

/** What a stream's bucket id cache charges its bytes to (the process-wide bound, fairly). */
export interface IdBytesLedger {
  take(bytes: number): boolean;
  give(bytes: number): void;
}

export class QuotaStream implements Watching, IdBytesLedger {
  /** What its peer holds against the bounds; undefined while the stream is not admitted. */
  hold: PeerHold | undefined = undefined;
  /** The domain of the stream's first report. */
  domain: string | undefined = undefined;
  /** The buckets this stream watches, by bucket key. */
  readonly buckets = new Map<string, Bucket<QuotaStream>>();
  private readonly due = new Set<Bucket<QuotaStream>>();
  private readonly abandons = new Map<string, BucketPairs>();
  /** Reports received that passed the checks. */
  reportsSeen = 0;
  private isOver = false;

  constructor(
    readonly id: string,
    /** Where the stream comes from, for operators (the peer's address). */
    readonly peer: string,
    private readonly sink: QuotaStreamSink,
    private readonly host: StreamHost,
  ) {}

  get isEnded(): boolean {
    return this.isOver;
  }

  /** One decoded report from the client. */
  receive(message: WireUsageReports): void {
    if (this.isOver) return;
    let reports: CheckedReports;
    try {
      reports = checkReports(message, this.domain === undefined);
    } catch (err: unknown) {
      if (!(err instanceof InvalidReport)) throw err;
      this.endInvalid(err.message);
      return;
    }
    if (this.domain !== undefined && reports.domain !== '' && reports.domain !== this.domain) {
      this.endInvalid(
        `domain: this stream serves ${JSON.stringify(this.domain)}; open another stream for ${JSON.stringify(reports.domain)}`,
      );
      return;
    }
    this.domain ??= reports.domain;
    this.reportsSeen += 1;
    if (reports.refused.length > 0) {
      const first = reports.refused[0] as RefusedUsage;
      this.host.noteRefused(this, `${first.field}: ${first.reason}`, reports.refused);
    }
    this.host.report(this, reports);
  }

  /** Ends the stream for a message no Envoy sends (a first one without a domain, another domain). */
  private endInvalid(message: string): void {
    this.host.noteInvalid();
    this.host.noteRefused(this, message, []);
    this.end('INVALID_ARGUMENT', message);
  }

  take(bytes: number): boolean {
    return !this.isOver && this.host.takeIdBytes(this, bytes);
  }

  give(bytes: number): void {
    this.host.giveIdBytes(this, bytes);
  }

  needsSend(bucket: Bucket<QuotaStream>): void {
    if (this.isOver) return;
    this.due.add(bucket);
    this.host.markDirty(this);
  }

  /** The bucket is over for this stream: it is told to abandon it. */
  abandon(bucket: Bucket<QuotaStream>): void {
    if (this.isOver) return;
    this.buckets.delete(bucket.key);
    this.due.delete(bucket);
    this.abandons.set(bucket.key, bucket.pairs);
    this.host.markDirty(this);
  }

  /** Whether something waits to be sent. */
  get hasDue(): boolean {
    return this.due.size > 0 || this.abandons.size > 0;
  }

  /** Sends what is due in one response, unless the peer is not reading; false then. */
  flush(): boolean {
    if (this.isOver || !this.hasDue) return true;
    if (!this.sink.canSend()) return false;
    const actions: BucketAction[] = [];
    for (const [key, bucket] of this.abandons) {
      actions.push({ kind: 'abandon', bucket });
      this.abandons.delete(key);
    }
    const nowMs = this.host.nowMs();
    for (const bucket of this.due) {
      const action = bucket.assignmentFor(this, nowMs);
      if (action !== undefined) {
        actions.push(action);
        this.host.noteSent(bucket, action);
      }
    }
    this.due.clear();
    if (actions.length > 0) this.sink.send(actions);
    return true;
  }

  /** The client half-closed the stream: it will report nothing more, so it is over. */
  remoteEnded(): void {
    this.end('OK', '');
  }

  /** The stream is gone (reset, or its connection closed): everything it held is released. */
  closed(): void {
    if (this.isOver) return;
    this.isOver = true;
    this.host.release(this);
  }

  /** Ends the stream with `status`, releasing what it held. */
  end(status: QuotaStatus, message: string): void {
    if (this.isOver) return;
    this.isOver = true;
    this.host.release(this);
    this.sink.end(status, message);
  }
}
