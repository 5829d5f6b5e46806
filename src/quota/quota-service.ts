// The quota service of one replica: every stream's buckets, their shares of the rules' budgets,
// rule changes pushed at once, silent Envoys expired, and demand exchanged with other replicas.
import type { Clock } from '../lib/clock';
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { Bucket, type RemoteClaim } from './bucket';
import { QuotaCaps, type CapRefusal, type QuotaCapLimits, type WatchCounts } from './caps';
import type { QuotaDemandShare } from './demand-share';
import { bucketKey, type BucketAction, type UsageReports } from './messages';
import type { QuotaStats } from './quota-stats';
import { PartsRunner } from './in-parts';
import { QuotaStream, type QuotaStreamSink, type StreamHost } from './quota-stream';
import { RecomputeQueue } from './recompute';
import { UsageRefusals } from './refusals';
import { isSamePolicy, QuotaRuleSet, type BucketPairs, type QuotaRule } from './rules';
import { RESTART_HOLD_MS } from './timing';
import type { RefusedUsage } from './validate';

/** The bounds and timings of the quota service (settings). */
export interface QuotaLimits extends QuotaCapLimits {
  /** A bucket id's bytes on the wire (the transport's bound: it refuses longer ids undecoded). */
  readonly maxBucketIdBytes: number;
  /** Streams one connection may hold (the transport's bound, kept with the others). */
  readonly maxStreamsPerConnection: number;
  /** How often silent Envoys expire, assignments are refreshed and demand is exchanged. */
  readonly tickMs: number;
  /** How long other replicas' demand is trusted without a successful exchange. */
  readonly shareTtlMs: number;
}

type BucketKey = { readonly domain: string; readonly key: string };

export interface QuotaServiceOptions {
  readonly clock: Clock;
  readonly share: QuotaDemandShare;
  readonly limits: QuotaLimits;
  readonly logger: Logger;
  /** Undefined: nothing is counted (tools, tests). */
  readonly stats: QuotaStats | undefined;
}

export class QuotaService implements StreamHost {
  private rules: QuotaRuleSet = QuotaRuleSet.EMPTY;
  private readonly buckets = new Map<string, Bucket<QuotaStream>>();
  private readonly streams = new Set<QuotaStream>();
  private readonly dirty = new Set<QuotaStream>();
  /** Streams whose refused reports were logged (once per stream). */
  private readonly refusals: UsageRefusals;
  /** Bucket keys of the pairs a stream's reports name again and again (validate.ts). */
  private readonly keys = new WeakMap<BucketPairs, BucketKey>();
  /** Buckets this replica published at the last exchange (withdrawn when they go). */
  private published = new Set<string>();
  private lastExchangeMs = 0;
  /** Until then, an Envoy that comes with a measured report keeps the assignment it holds. */
  private readonly holdUntilMs: number;
  private isExchanging = false;
  private isFlushQueued = false;
  private nextStreamId = 1;
  private timer: NodeJS.Timeout | undefined;
  private isClosed = false;
  private readonly caps: QuotaCaps;
  private readonly recompute = new RecomputeQueue<QuotaStream>(() => {
    this.flushDirty();
  });
  /** A reload's pass over the watched buckets, a part per turn. */
  private readonly reload = new PartsRunner();

  constructor(private readonly options: QuotaServiceOptions) {
    this.lastExchangeMs = options.clock.nowMs();
    this.holdUntilMs = this.lastExchangeMs + RESTART_HOLD_MS;
    this.refusals = new UsageRefusals(options.logger, options.stats);
    this.caps = new QuotaCaps(options.limits, options.logger, () => this.nowMs());
  }

  nowMs(): number {
    return this.options.clock.nowMs();
  }

  /** The bounds and timings it runs with. */
  get limits(): QuotaLimits {
    return this.options.limits;
  }

  /** This replica's id, the prefix of its streams' ids. */
  get replicaId(): string {
    return this.options.share.replicaId;
  }

  /** The rules in force. */
  get currentRules(): QuotaRuleSet {
    return this.rules;
  }

  /** The streams open now. */
  get openStreams(): ReadonlySet<QuotaStream> {
    return this.streams;
  }

  /** Every bucket some stream of this replica watches. */
  get allBuckets(): Iterable<Bucket<QuotaStream>> {
    return this.buckets.values();
  }

  /** Starts ticking (unref'd: a ticking quota service keeps no process alive). */
  start(): void {
    if (this.timer !== undefined || this.isClosed) return;
    this.timer = setInterval(() => {
      this.tick().catch((err: unknown) => {
        this.options.logger.error('quota service tick failed', { error: describeError(err) });
      });
    }, this.options.limits.tickMs);
    this.timer.unref();
  }

  /** A stream from `peer` (address:port), ended at once when closed or past RLQS_MAX_STREAMS. */
  openStream(sink: QuotaStreamSink, peer: string): QuotaStream {
    const id = `${this.options.share.replicaId}/${this.nextStreamId++}`;
    const stream = new QuotaStream(id, peer, sink, this);
    this.streams.add(stream);
    this.options.stats?.streamsOpen.set(this.streams.size);
    const admitted = this.isClosed ? undefined : this.caps.openStream(peer);
    if (admitted === undefined) stream.end('UNAVAILABLE', 'the server is shutting down');
    else if ('cap' in admitted) this.refuse(stream, admitted);
    else stream.hold = admitted;
    return stream;
  }

  /** Watches of ruled buckets held by all streams, those of buckets without a rule, peers. */
  get watchCounts(): WatchCounts {
    return this.caps.counts;
  }

  /**
   * Takes a new configuration's rules: a bucket whose rule is gone is abandoned by every Envoy
   * watching it; a bucket whose rule changed (or that has one now) is shared out again and
   * pushed to all its watchers at once. Buckets are visited a part per turn (in-parts.ts), so
   * a reload over many watched buckets holds no connection up for all of them; a bucket first
   * watched meanwhile takes the new rules at once.
   */
  setRules(rules: QuotaRuleSet): void {
    this.rules = rules;
    this.options.stats?.bind(rules.domains().flatMap((d) => rules.rulesOf(d)));
    this.reload.run(
      [...this.buckets.values()],
      (bucket) => this.rematch(bucket, rules),
      (isDone) => {
        this.flushDirty();
        if (isDone) this.caps.recount(this.streams);
      },
    );
  }

  /** Gives a bucket the rule `rules` have for it; returns the work it cost. */
  private rematch(bucket: Bucket<QuotaStream>, rules: QuotaRuleSet): number {
    if (this.buckets.get(bucket.key) !== bucket) return 1;
    const before = bucket.rule;
    const after = rules.match(bucket.domain, bucket.pairs);
    const work = 1 + bucket.watchers.size;
    if (before !== undefined && after === undefined) {
      this.abandonAll(bucket, before);
      return work;
    }
    bucket.rule = after;
    if (after === undefined) return 1;
    const isSame = before !== undefined && before.id === after.id && isSamePolicy(before, after);
    if (isSame) return 1;
    bucket.reallocate(true);
    return work;
  }

  report(stream: QuotaStream, reports: UsageReports): void {
    const domain = stream.domain ?? reports.domain;
    const domainStats = this.options.stats?.domain(domain);
    if (stream.reportsSeen === 1) this.countStreamOfDomain(domain, 1);
    if (reports.usages.length > 0 && this.rules.rulesOf(domain).length === 0) {
      this.refusals.unknownDomain(stream, domain, reports.usages.length);
      return;
    }
    const nowMs = this.nowMs();
    /** Each bucket reported on, and whether this report is the stream's watch of it. */
    const touched = new Map<Bucket<QuotaStream>, boolean>();
    for (const usage of reports.usages) {
      const key = this.keyOf(domain, usage.bucket);
      let bucket = stream.buckets.get(key);
      if (bucket === undefined) {
        const watched = this.watch(stream, key, domain, usage.bucket);
        if (!(watched instanceof Bucket)) {
          this.refusals.capped(stream, watched, 1, domainStats);
          continue;
        }
        bucket = watched;
      }
      const isWatch = bucket.report(stream, usage, nowMs, this.holdUntilMs);
      domainStats?.reports.inc();
      if (bucket.rule === undefined) domainStats?.bucketsWithoutRule.inc();
      else this.options.stats?.rule(bucket.rule)?.reports.inc();
      touched.set(bucket, isWatch || touched.get(bucket) === true);
    }
    // A bucket many Envoys share is shared out once a turn or tick, not once a report.
    for (const [bucket, isWatch] of touched) this.recompute.changed(bucket, isWatch);
    this.flushDirty();
  }

  /** The stream's new watch of a bucket, or what refuses it (that usage alone is left out). */
  private watch(
    stream: QuotaStream,
    key: string,
    domain: string,
    pairs: BucketPairs,
  ): Bucket<QuotaStream> | CapRefusal {
    const existing = this.buckets.get(key);
    const rule = existing === undefined ? this.rules.match(domain, pairs) : existing.rule;
    const refusal = this.caps.refuseWatch(stream.hold, rule !== undefined, stream.buckets.size);
    if (refusal !== undefined) return refusal;
    let bucket = existing;
    if (bucket === undefined) {
      bucket = new Bucket<QuotaStream>(key, domain, pairs, rule);
      this.buckets.set(key, bucket);
    }
    stream.buckets.set(key, bucket);
    this.caps.watched(stream.hold, 1, rule !== undefined);
    return bucket;
  }

  private refuse(stream: QuotaStream, refusal: CapRefusal): void {
    this.options.stats?.refused[refusal.cap].inc();
    this.caps.noteRefused(refusal, stream.peer);
    stream.end('RESOURCE_EXHAUSTED', refusal.message);
  }

  markDirty(stream: QuotaStream): void {
    this.dirty.add(stream);
  }

  release(stream: QuotaStream): void {
    if (!this.streams.delete(stream)) return;
    this.dirty.delete(stream);
    this.options.stats?.streamsOpen.set(this.streams.size);
    if (stream.domain !== undefined) this.countStreamOfDomain(stream.domain, -1);
    if (stream.hold !== undefined) this.caps.closeStream(stream.hold);
    for (const bucket of stream.buckets.values()) {
      bucket.watchers.delete(stream);
      this.caps.watched(stream.hold, -1, bucket.rule !== undefined);
      if (bucket.watchers.size === 0) this.buckets.delete(bucket.key);
      else this.recompute.changed(bucket, true);
    }
    stream.buckets.clear();
    this.queueFlush();
  }

  noteSent(bucket: Bucket<QuotaStream>, action: BucketAction): void {
    if (action.kind === 'assign' && bucket.rule !== undefined)
      this.options.stats?.rule(bucket.rule)?.assignmentsPushed.inc();
  }

  noteInvalid(): void {
    this.options.stats?.invalidReports.inc();
  }

  noteRefused(stream: QuotaStream, reason: string, usages: readonly RefusedUsage[]): void {
    this.refusals.note(stream, reason, usages);
  }

  takeIdBytes(stream: QuotaStream, bytes: number): boolean {
    const hold = stream.hold;
    const refusal = hold && this.caps.takeIdBytes(hold, bytes);
    if (refusal !== undefined) this.refusals.capped(stream, refusal, 1);
    return hold !== undefined && refusal === undefined;
  }

  giveIdBytes(stream: QuotaStream, bytes: number): void {
    this.caps.giveIdBytes(stream.hold, bytes);
  }

  /**
   * Expires Envoys silent past their assignment's TTL (abandon, share freed), refreshes
   * assignments past a third of their TTL, retries sends the peer was not ready for, and exchanges
   * demand with the other replicas.
   */
  async tick(): Promise<void> {
    const nowMs = this.nowMs();
    for (const bucket of [...this.buckets.values()]) {
      for (const watcher of bucket.expire(nowMs)) {
        watcher.stream.abandon(bucket);
        this.caps.watched(watcher.stream.hold, -1, bucket.rule !== undefined);
        if (bucket.rule !== undefined) this.options.stats?.rule(bucket.rule)?.abandoned.inc();
      }
      if (bucket.watchers.size === 0) this.buckets.delete(bucket.key);
      else {
        bucket.reallocate();
        bucket.refresh(nowMs);
      }
    }
    this.recompute.clear();
    for (const stream of this.streams) if (stream.hasDue) this.dirty.add(stream);
    this.flushDirty();
    this.updateGauges();
    await this.exchange();
  }

  /** Ends every stream (UNAVAILABLE, so Envoys reconnect elsewhere) and stops ticking. */
  async close(): Promise<void> {
    this.isClosed = true;
    clearInterval(this.timer);
    this.recompute.close();
    this.reload.cancel();
    for (const stream of [...this.streams])
      stream.end('UNAVAILABLE', 'the server is shutting down');
    await this.options.share.close();
  }

  private keyOf(domain: string, pairs: BucketPairs): string {
    const known = this.keys.get(pairs);
    if (known?.domain === domain) return known.key;
    const key = bucketKey(domain, pairs);
    this.keys.set(pairs, { domain, key });
    return key;
  }

  private abandonAll(bucket: Bucket<QuotaStream>, rule: QuotaRule): void {
    for (const watcher of bucket.watchers.values()) {
      this.caps.watched(watcher.stream.hold, -1, true);
      watcher.stream.abandon(bucket);
      this.options.stats?.abandoned(rule).inc();
    }
    bucket.watchers.clear();
    this.buckets.delete(bucket.key);
  }

  private countStreamOfDomain(domain: string, change: number): void {
    const gauge = this.options.stats?.domain(domain).streamsOpen;
    if (gauge !== undefined) gauge.set(Math.max(0, gauge.value + change));
  }

  private updateGauges(): void {
    const stats = this.options.stats;
    if (stats === undefined) return;
    const counts = new Map<QuotaRule, number>();
    for (const domain of this.rules.domains())
      for (const rule of this.rules.rulesOf(domain)) counts.set(rule, 0);
    for (const bucket of this.buckets.values())
      if (bucket.rule !== undefined)
        counts.set(bucket.rule, (counts.get(bucket.rule) ?? 0) + bucket.watchers.size);
    for (const [rule, count] of counts) stats.rule(rule)?.streamsOpen.set(count);
  }

  /** Flushes dirty streams once the current event is handled (a release inside a flush). */
  private queueFlush(): void {
    if (this.isFlushQueued || this.dirty.size === 0) return;
    this.isFlushQueued = true;
    queueMicrotask(() => {
      this.isFlushQueued = false;
      this.flushDirty();
    });
  }

  private flushDirty(): void {
    for (const stream of [...this.dirty]) {
      if (stream.flush()) this.dirty.delete(stream);
    }
  }

  /** Publishes this replica's demand of shared buckets and takes in the others'. */
  private async exchange(): Promise<void> {
    if (this.isExchanging) return;
    this.isExchanging = true;
    try {
      const local = new Map<string, readonly RemoteClaim[]>();
      for (const bucket of this.buckets.values())
        if (bucket.isShared) local.set(bucket.key, bucket.claims());
      for (const key of this.published) if (!local.has(key)) local.set(key, []);
      let others: ReadonlyMap<string, readonly RemoteClaim[]> | undefined;
      try {
        others = await this.options.share.exchange(local);
        this.lastExchangeMs = this.nowMs();
        this.published = new Set([...local].filter(([, c]) => c.length > 0).map(([k]) => k));
      } catch (err: unknown) {
        this.options.logger.warn('cannot exchange quota demand with other replicas', {
          error: describeError(err),
        });
        if (this.nowMs() - this.lastExchangeMs <= this.options.limits.shareTtlMs) return;
        others = new Map();
      }
      this.takeRemote(others);
    } finally {
      this.isExchanging = false;
    }
  }

  private takeRemote(others: ReadonlyMap<string, readonly RemoteClaim[]>): void {
    for (const bucket of this.buckets.values()) {
      if (!bucket.isShared) continue;
      const remote = others.get(bucket.key) ?? [];
      if (JSON.stringify(remote) === JSON.stringify(bucket.remote)) continue;
      bucket.remote = remote;
      bucket.reallocate();
    }
    this.flushDirty();
  }
}
