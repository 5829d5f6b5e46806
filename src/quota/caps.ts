// The quota service's bounds across all streams: streams open, watches of ruled buckets, watches
// of buckets no rule governs, and bucket id bytes held; each shared fairly between peers, and
// what passes one refused alone, with a message naming the bound and its setting.
import type { Logger } from '../lib/logger';

/** The process-wide bounds (settings RLQS_MAX_STREAMS, RLQS_MAX_BUCKETS ...). */
export interface QuotaCapLimits {
  /** Buckets one stream may watch; further ones get no assignment and are counted. */
  readonly maxBucketsPerStream: number;
  readonly maxStreams: number;
  readonly maxBuckets: number;
  readonly maxBucketsWithoutRule: number;
  /** Bytes the streams' bucket id caches hold, all together (RLQS_MAX_BUCKET_ID_BYTES_TOTAL). */
  readonly maxBucketIdBytesTotal: number;
}

/**
 * A bound, by its setting's name in lower case without `RLQS_`: the last part of its statistic
 * `ratelimit.rlqs.refused.<cap>`.
 */
export type QuotaCap =
  | 'max_streams'
  | 'max_buckets'
  | 'max_buckets_without_rule'
  | 'max_buckets_per_stream'
  | 'max_bucket_id_bytes'
  | 'max_bucket_id_bytes_total';

export const QUOTA_CAPS: readonly QuotaCap[] = [
  'max_streams',
  'max_buckets',
  'max_buckets_without_rule',
  'max_buckets_per_stream',
  'max_bucket_id_bytes',
  'max_bucket_id_bytes_total',
];

/** The setting a cap is, as operators write it. */
export function capSetting(cap: QuotaCap): string {
  return `RLQS_${cap.toUpperCase()}`;
}

/** A peer's address without its port: one Envoy, however many connections it opens. */
export function peerAddress(peer: string): string {
  return /^(.*):\d+$/.exec(peer)?.[1] ?? peer;
}

/** Something a bound refused: which, and the message for the log (or the stream's status). */
export interface CapRefusal {
  readonly cap: QuotaCap;
  readonly message: string;
}

/**
 * What one peer (a remote address: an Envoy, however many connections it opens) holds against
 * the bounds. Streams keep a reference, so a usage's checks never look a peer up.
 */
export interface PeerHold {
  readonly address: string;
  streams: number;
  /** Watches of buckets a rule governs. */
  watches: number;
  /** Bytes its streams' bucket id caches hold. */
  idBytes: number;
}

/**
 * One peer may hold this fraction of a bound once the bound is contended, as a connection may of
 * the HTTP/2 buffer budget (buffer-budget.ts): it takes 32 peers at their share to fill it.
 */
const PEER_SHARE = 32;

/**
 * Whether a peer holding `held` may take `amount` more of a bound `max` now held to `total`.
 * Up to half of the bound is first come, first served, so one large Envoy alone is not held to
 * a thirty-second; past half (contended) a peer takes more only while within its share. So a
 * peer past its share is refused first, and the other half stays for peers within their
 * shares: a newcomer gets its share unless 16 peers or more have taken theirs.
 */
export function admitsFairly(total: number, held: number, amount: number, max: number): boolean {
  if (total + amount > max) return false;
  if (total + amount <= Math.ceil(max / 2)) return true;
  return held + amount <= Math.max(1, Math.floor(max / PEER_SHARE));
}

export interface WatchCounts {
  readonly watches: number;
  readonly withoutRule: number;
  readonly peers: number;
}

/** Refusals are logged at most once in this long per bound, with how many were not. */
const LOG_EVERY_MS = 10_000;

/**
 * Counts what the streams hold against the bounds, in total and per peer. The quota service
 * tells it of every stream, watch and cached id taken or given up.
 */
export class QuotaCaps {
  /** Streams admitted and open. */
  streams = 0;
  /** Watches of ruled buckets held by all streams (a bucket two streams watch counts twice). */
  watches = 0;
  /** Watches of buckets no rule governs: not shared, see refuseWatch. */
  watchesWithoutRule = 0;
  /** Bytes all bucket id caches hold. */
  idBytes = 0;
  private readonly peers = new Map<string, PeerHold>();
  private readonly lastLogMs = new Map<QuotaCap, number>();
  private readonly unlogged = new Map<QuotaCap, number>();

  constructor(
    private readonly limits: QuotaCapLimits,
    private readonly logger: Logger,
    private readonly nowMs: () => number,
  ) {}

  /** The peer holding for `address`, made on first use and dropped once it holds nothing. */
  peer(address: string): PeerHold {
    let hold = this.peers.get(address);
    if (hold === undefined) {
      hold = { address, streams: 0, watches: 0, idBytes: 0 };
      this.peers.set(address, hold);
    }
    return hold;
  }

  /** Watches of ruled buckets, watches of the others, and peers holding something. */
  get counts(): WatchCounts {
    return { watches: this.watches, withoutRule: this.watchesWithoutRule, peers: this.peers.size };
  }

  /** The holding of `peer` (address:port) with one more stream, or why it is refused. */
  openStream(peer: string): PeerHold | CapRefusal {
    const hold = this.peer(peerAddress(peer));
    const max = this.limits.maxStreams;
    if (!admitsFairly(this.streams, hold.streams, 1, max)) {
      this.drop(hold);
      const held = hold.streams;
      return {
        cap: 'max_streams',
        message: `this server holds ${this.streams} of ${max} quota streams and this peer ${held}, past its share (RLQS_MAX_STREAMS)`,
      };
    }
    this.streams += 1;
    hold.streams += 1;
    return hold;
  }

  closeStream(hold: PeerHold): void {
    this.streams = Math.max(0, this.streams - 1);
    hold.streams = Math.max(0, hold.streams - 1);
    this.drop(hold);
  }

  /**
   * Why one more watch of `hold` is refused, or undefined. Watches of buckets no rule governs
   * are not shared: refusing one costs its Envoy nothing (with or without it, no assignment
   * comes and no_assignment_behavior applies), so they are only kept to a small number.
   */
  refuseWatch(
    hold: PeerHold | undefined,
    hasRule: boolean,
    streamWatches: number,
  ): CapRefusal | undefined {
    const { maxBuckets, maxBucketsWithoutRule, maxBucketsPerStream } = this.limits;
    // A stream not admitted is ended at once and reads nothing: this only keeps the types true.
    if (hold === undefined) return { cap: 'max_streams', message: 'the stream was not admitted' };
    if (streamWatches >= maxBucketsPerStream)
      return {
        cap: 'max_buckets_per_stream',
        message: `this stream watches ${maxBucketsPerStream} buckets, its limit (RLQS_MAX_BUCKETS_PER_STREAM)`,
      };
    if (!hasRule)
      return this.watchesWithoutRule < maxBucketsWithoutRule
        ? undefined
        : {
            cap: 'max_buckets_without_rule',
            message: `this server watches ${maxBucketsWithoutRule} buckets that no rule governs, its limit (RLQS_MAX_BUCKETS_WITHOUT_RULE)`,
          };
    if (admitsFairly(this.watches, hold.watches, 1, maxBuckets)) return undefined;
    return {
      cap: 'max_buckets',
      message: `this server's quota streams watch ${this.watches} of ${maxBuckets} ruled buckets and this peer's ${hold.watches}, past its share (RLQS_MAX_BUCKETS)`,
    };
  }

  /** A watch taken (+1) or given up (-1); a stream not admitted holds none. */
  watched(hold: PeerHold | undefined, change: number, hasRule: boolean): void {
    if (hold === undefined) return;
    if (!hasRule) {
      this.watchesWithoutRule = Math.max(0, this.watchesWithoutRule + change);
      return;
    }
    this.watches = Math.max(0, this.watches + change);
    hold.watches = Math.max(0, hold.watches + change);
    if (change < 0) this.drop(hold);
  }

  /** Takes `bytes` of a bucket id cache for `hold`; or, taking nothing, why not. */
  takeIdBytes(hold: PeerHold, bytes: number): CapRefusal | undefined {
    const max = this.limits.maxBucketIdBytesTotal;
    if (admitsFairly(this.idBytes, hold.idBytes, bytes, max)) {
      this.idBytes += bytes;
      hold.idBytes += bytes;
      return undefined;
    }
    return {
      cap: 'max_bucket_id_bytes_total',
      message: `the streams' bucket id caches hold ${this.idBytes} of ${max} bytes and this peer's ${hold.idBytes}, past its share (RLQS_MAX_BUCKET_ID_BYTES_TOTAL): the id is decoded at each report, not kept`,
    };
  }

  giveIdBytes(hold: PeerHold | undefined, bytes: number): void {
    if (hold === undefined) return;
    this.idBytes = Math.max(0, this.idBytes - bytes);
    hold.idBytes = Math.max(0, hold.idBytes - bytes);
    this.drop(hold);
  }

  /**
   * Counts the watches again after a reload gave buckets other rules: each stream's buckets,
   * with or without a rule now.
   */
  recount(
    streams: Iterable<{
      readonly hold: PeerHold | undefined;
      readonly buckets: ReadonlyMap<string, { readonly rule: unknown }>;
    }>,
  ): void {
    for (const hold of this.peers.values()) hold.watches = 0;
    let watches = 0;
    let withoutRule = 0;
    for (const stream of streams) {
      let ruled = 0;
      for (const bucket of stream.buckets.values()) if (bucket.rule !== undefined) ruled += 1;
      withoutRule += stream.buckets.size - ruled;
      watches += ruled;
      if (stream.hold !== undefined) stream.hold.watches += ruled;
    }
    this.watches = watches;
    this.watchesWithoutRule = withoutRule;
  }

  /** Logs a refusal at info, one line per bound every LOG_EVERY_MS with the count left out. */
  noteRefused(refusal: CapRefusal, peer: string): void {
    const { cap } = refusal;
    const nowMs = this.nowMs();
    const last = this.lastLogMs.get(cap);
    if (last !== undefined && nowMs - last < LOG_EVERY_MS) {
      this.unlogged.set(cap, (this.unlogged.get(cap) ?? 0) + 1);
      return;
    }
    this.lastLogMs.set(cap, nowMs);
    const notLogged = this.unlogged.get(cap) ?? 0;
    this.unlogged.delete(cap);
    this.logger.info('refused an RLQS stream (RESOURCE_EXHAUSTED)', {
      peer,
      reason: refusal.message,
      setting: capSetting(cap),
      ...(notLogged > 0 ? { refusedWithoutLog: notLogged } : {}),
    });
  }

  private drop(hold: PeerHold): void {
    if (hold.streams === 0 && hold.watches === 0 && hold.idBytes === 0)
      this.peers.delete(hold.address);
  }
}
