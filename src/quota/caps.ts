// The quota service's bounds across all streams: streams open, bucket watches, and watches of
// buckets no rule governs; what passes one is refused with a message naming it and its setting.
import type { Logger } from '../lib/logger';

/** The process-wide bounds (settings RLQS_MAX_STREAMS, RLQS_MAX_BUCKETS ...). */
export interface QuotaCapLimits {
  readonly maxStreams: number;
  readonly maxBuckets: number;
  readonly maxBucketsWithoutRule: number;
}

/** Refusals are logged at most once in this long per bound, with how many were not. */
const LOG_EVERY_MS = 10_000;

/**
 * Counts what the streams hold against the bounds. The quota service tells it of every watch
 * taken or given up; a refusal is a message for the stream's RESOURCE_EXHAUSTED status.
 */
export class QuotaCaps {
  /** Watches held by all streams (a bucket two streams watch counts twice). */
  watches = 0;
  /** Of those, watches of buckets no rule governs. */
  watchesWithoutRule = 0;
  private readonly lastLogMs = new Map<string, number>();
  private readonly unlogged = new Map<string, number>();

  constructor(
    private readonly limits: QuotaCapLimits,
    private readonly logger: Logger,
    private readonly nowMs: () => number,
  ) {}

  /** Why one more stream beside `open` is refused, or undefined when it may open. */
  refuseStream(open: number): string | undefined {
    const max = this.limits.maxStreams;
    if (open < max) return undefined;
    return `this server holds ${max} quota streams, its limit (RLQS_MAX_STREAMS)`;
  }

  /** Why one more watch (of a bucket with or without a rule) is refused, or undefined. */
  refuseWatch(hasRule: boolean): string | undefined {
    const { maxBuckets, maxBucketsWithoutRule } = this.limits;
    if (this.watches >= maxBuckets)
      return `this server's quota streams watch ${maxBuckets} buckets, its limit (RLQS_MAX_BUCKETS)`;
    if (!hasRule && this.watchesWithoutRule >= maxBucketsWithoutRule)
      return `this server's quota streams watch ${maxBucketsWithoutRule} buckets that no rule governs, its limit (RLQS_MAX_BUCKETS_WITHOUT_RULE)`;
    return undefined;
  }

  /** A watch taken (+1) or given up (-1). */
  watched(change: number, hasRule: boolean): void {
    this.watches = Math.max(0, this.watches + change);
    if (!hasRule) this.watchesWithoutRule = Math.max(0, this.watchesWithoutRule + change);
  }

  /** Counts the watches without a rule again, after a reload gave buckets other rules. */
  recount(
    buckets: Iterable<{ readonly rule: unknown; readonly watchers: { size: number } }>,
  ): void {
    let withoutRule = 0;
    for (const bucket of buckets)
      if (bucket.rule === undefined) withoutRule += bucket.watchers.size;
    this.watchesWithoutRule = withoutRule;
  }

  /** Logs a refusal at info, one line per bound every LOG_EVERY_MS with the count left out. */
  noteRefused(reason: string, peer: string): void {
    const bound = /\((RLQS_[A-Z_]+)\)$/.exec(reason)?.[1] ?? reason;
    const nowMs = this.nowMs();
    const last = this.lastLogMs.get(bound);
    if (last !== undefined && nowMs - last < LOG_EVERY_MS) {
      this.unlogged.set(bound, (this.unlogged.get(bound) ?? 0) + 1);
      return;
    }
    this.lastLogMs.set(bound, nowMs);
    const notLogged = this.unlogged.get(bound) ?? 0;
    this.unlogged.delete(bound);
    this.logger.info('refused an RLQS stream (RESOURCE_EXHAUSTED)', {
      peer,
      reason,
      ...(notLogged > 0 ? { refusedWithoutLog: notLogged } : {}),
    });
  }
}
