// One quota bucket of one domain on this replica: the Envoys watching it, their demand, their
// shares of the rule's budget, and which of them a changed share must reach.
import { fairShares, wholeParts, type Claim } from './allocate';
import { isBeyondThreshold, strategyOf } from './assignment';
import { coveredMs, MAX_COUNTED_INTERVAL_MS } from './elapsed';
import type { BucketAction } from './messages';
import { QUOTA_UNIT_SECONDS, type BucketPairs, type QuotaRule } from './rules';
import { MIN_FORGET_MS, REFRESH_AFTER_TTL_PART } from './timing';

/**
 * Reports covering less time than this add up until they cover this much: a rate measured over
 * a few hundred milliseconds is noise (Envoy's tick just after it made the bucket).
 */
export const MIN_MEASURED_INTERVAL_MS = 500;
/**
 * The default assignment TTL: three reporting intervals of the Envoy it goes to, and at least
 * this. Envoy reports every 5 s and, when its stream breaks, reconnects only at its next tick;
 * assignments are sent again once a third of their TTL has passed, so an Envoy always holds
 * one with 20 s or more to live: a restart of the service within about 14 s (20 s, less the
 * 5 s to Envoy's next tick and the service's own tick) keeps every Envoy on its assignment.
 */
export const MIN_DEFAULT_TTL_MS = 30_000;
/**
 * A watcher that has sent only its watch (whose reporting interval is not known yet) is kept
 * this long for its first periodic report, whatever the TTL.
 */
export const FIRST_REPORT_GRACE_MS = 600_000;

/** A report covering this much is a tick's (a reconnecting Envoy), not a watch. */
const TICK_REPORT_MIN_MS = 1000;

/** Milliseconds rounded up to whole seconds: Envoy reads only the seconds of a TTL. */
export function wholeSecondsMs(ms: number): number {
  return Math.ceil(ms / 1000 - 1e-9) * 1000;
}

/**
 * More Envoys than the rule's max_tokens: not every one can hold a whole token, and one without
 * could let nothing through (Envoy's bucket holds at most max_tokens). The budget goes to those
 * holding one, in proportion to their shares, so that it is used; the others are told to deny.
 */
function onTokenHolders(
  shares: ReadonlyMap<string, number>,
  parts: ReadonlyMap<string, number>,
  budget: number,
): Map<string, number> {
  let held = 0;
  for (const [id, share] of shares) if ((parts.get(id) ?? 0) > 0) held += share;
  const scale = held > 0 ? budget / held : 0;
  const out = new Map<string, number>();
  for (const [id, share] of shares) out.set(id, (parts.get(id) ?? 0) > 0 ? share * scale : 0);
  return out;
}

/** What a bucket needs of a stream watching it. */
export interface Watching {
  /** The claim id: unique across replicas. */
  readonly id: string;
  /** The bucket has something to send this stream (its share changed, or is due again). */
  needsSend(bucket: Bucket): void;
}

/** The assignment a watcher holds: what was sent and when. */
interface Sent {
  readonly share: number;
  readonly atMs: number;
  readonly ttlMs: number;
}

/** One stream's watch of the bucket. */
export interface Watcher<S extends Watching = Watching> {
  readonly stream: S;
  /** Requests a second it let through and denied lately; undefined until measured. */
  demandPerSecond: number | undefined;
  /** When its last report was received (this replica's clock). */
  lastReportMs: number;
  /** Whether a report of it has covered enough time to measure (not only its watch). */
  hasMeasured: boolean;
  /** Requests and time of reports too short to measure alone, added to the next. */
  pendingRequests: number;
  pendingMs: number;
  /** The longest time one of its reports covered: its reporting interval, for its TTL. */
  intervalMs: number;
  /** Just after a start (RESTART_HOLD_MS): until when it keeps the assignment it came with. */
  keepsOwnUntilMs: number | undefined;
  /** Its share now, in the rule's unit. */
  target: number;
  sent: Sent | undefined;
}

/** A remote Envoy's claim as replicas exchange it: demand in requests a second. */
export interface RemoteClaim {
  readonly id: string;
  readonly demandPerSecond: number | undefined;
}

/** A bucket watched by streams of type S. */
export class Bucket<S extends Watching = Watching> {
  rule: QuotaRule | undefined;
  readonly watchers = new Map<S, Watcher<S>>();
  /** Envoys of other replicas watching the same bucket, as last read. */
  remote: readonly RemoteClaim[] = [];
  /** Every claim's share (local and remote) at the last allocation, in the rule's unit. */
  shares: ReadonlyMap<string, number> = new Map();
  /** Every claim's whole part of the rule's max_tokens, for `shares`; made when first asked. */
  private tokenParts: ReadonlyMap<string, number> | undefined;

  constructor(
    /** Domain and bucket id in one string: the key of the bucket across replicas. */
    readonly key: string,
    readonly domain: string,
    readonly pairs: BucketPairs,
    rule: QuotaRule | undefined,
  ) {
    this.rule = rule;
  }

  /**
   * Records a report received at `nowMs`; true when it is the stream's first for this bucket (a
   * watch). Demand is measured over the time the report covered (elapsed.ts): Envoy's whole
   * seconds held to the receive times, so truncation does not overstate it.
   */
  report(
    stream: S,
    usage: { timeElapsedMs: number; allowed: number; denied: number },
    nowMs: number,
    holdUntilMs = 0,
  ): boolean {
    let watcher = this.watchers.get(stream);
    const gapMs = watcher === undefined ? undefined : nowMs - watcher.lastReportMs;
    const isNew = watcher === undefined;
    if (watcher === undefined) {
      watcher = {
        stream,
        demandPerSecond: undefined,
        lastReportMs: nowMs,
        hasMeasured: false,
        pendingRequests: 0,
        pendingMs: 0,
        intervalMs: 0,
        keepsOwnUntilMs: undefined,
        target: 0,
        sent: undefined,
      };
      this.watchers.set(stream, watcher);
    }
    watcher.lastReportMs = nowMs;
    const covered = coveredMs(usage.timeElapsedMs, gapMs);
    if (covered === undefined) return isNew;
    if (isNew && nowMs < holdUntilMs && covered >= TICK_REPORT_MIN_MS)
      watcher.keepsOwnUntilMs = holdUntilMs;
    watcher.intervalMs = Math.min(MAX_COUNTED_INTERVAL_MS, Math.max(watcher.intervalMs, covered));
    watcher.pendingRequests += usage.allowed + usage.denied;
    watcher.pendingMs += covered;
    if (watcher.pendingMs >= MIN_MEASURED_INTERVAL_MS) {
      watcher.hasMeasured = true;
      watcher.demandPerSecond = (watcher.pendingRequests * 1000) / watcher.pendingMs;
      watcher.pendingRequests = 0;
      watcher.pendingMs = 0;
    }
    return isNew;
  }

  /**
   * A watcher's assignment TTL in whole seconds, rounded up: the rule's, or three of its own
   * reporting intervals and at least MIN_DEFAULT_TTL_MS. What one stream reports moves only
   * its own TTL, and by at most three times MAX_COUNTED_INTERVAL_MS.
   */
  ttlMsOf(watcher: Watcher<S>): number {
    return wholeSecondsMs(
      this.rule?.assignmentTtlMs ?? Math.max(MIN_DEFAULT_TTL_MS, 3 * watcher.intervalMs),
    );
  }

  /** The local claims, demand in requests a second, for the other replicas. */
  claims(): RemoteClaim[] {
    return [...this.watchers.values()].map((w) => ({
      id: w.stream.id,
      demandPerSecond: w.demandPerSecond,
    }));
  }

  /** Whether the bucket's rule hands out shares of a budget (the others need no allocation). */
  get isShared(): boolean {
    return this.rule?.policy.kind === 'budget';
  }

  /**
   * Shares the budget again among every claim (local and remote) and tells the watchers whose
   * share must reach them: those holding nothing yet, those whose share moved past the push
   * threshold, and, when any share grows, every one whose share shrank, so that what the
   * Envoys hold together never exceeds the budget. `isChanged` (a new rule) tells them all.
   */
  reallocate(isChanged = false): void {
    const rule = this.rule;
    if (rule === undefined) return;
    this.computeTargets(rule);
    // Most reports move no share past the threshold: nothing is allocated for them.
    let told: Set<Watcher<S>> | undefined;
    let grows = false;
    for (const w of this.watchers.values()) {
      if (w.keepsOwnUntilMs !== undefined && !isChanged) continue;
      const sent = w.sent;
      if (isChanged || sent === undefined || isBeyondThreshold(sent.share, w.target)) {
        (told ??= new Set()).add(w);
        if (sent === undefined || w.target > sent.share) grows = true;
      }
    }
    if (told === undefined) return;
    if (grows) {
      for (const w of this.watchers.values()) {
        if (w.sent !== undefined && w.target < w.sent.share) told.add(w);
      }
    }
    for (const w of told) w.stream.needsSend(this);
  }

  private computeTargets(rule: QuotaRule): void {
    const policy = rule.policy;
    if (policy.kind === 'blanket') {
      for (const w of this.watchers.values()) w.target = 0;
      this.shares = new Map();
      return;
    }
    const unitSeconds = QUOTA_UNIT_SECONDS[policy.unit];
    const perUnit = (perSecond: number | undefined): number | undefined =>
      perSecond === undefined ? undefined : perSecond * unitSeconds;
    if (this.remote.length === 0 && this.watchers.size === 1) {
      for (const w of this.watchers.values())
        this.shareAlone(policy, w, perUnit(w.demandPerSecond));
      return;
    }
    const claims: Claim[] = this.remote.map((c) => ({
      id: c.id,
      demand: perUnit(c.demandPerSecond),
    }));
    for (const w of this.watchers.values())
      claims.push({ id: w.stream.id, demand: perUnit(w.demandPerSecond) });
    let shares = fairShares(policy.requestsPerUnit, claims);
    this.tokenParts = undefined;
    if (claims.length > policy.maxTokens) {
      const parts = wholeParts(policy.maxTokens, shares, policy.requestsPerUnit);
      shares = onTokenHolders(shares, parts, policy.requestsPerUnit);
      this.tokenParts = parts;
    }
    for (const w of this.watchers.values()) w.target = shares.get(w.stream.id) ?? 0;
    this.shares = shares;
  }

  /**
   * One claim alone, as fairShares computes it, without its map: a bucket
   * each Envoy has to itself is reported on all the time, and its map would live until the
   * next report, long enough to be copied by the collector.
   */
  private shareAlone(
    policy: Extract<QuotaRule['policy'], { kind: 'budget' }>,
    watcher: Watcher<S>,
    demand: number | undefined,
  ): void {
    const budget = Math.max(0, policy.requestsPerUnit);
    const wanted = Math.max(0, demand ?? Infinity);
    const share = wanted > budget ? budget : wanted + (budget - wanted);
    watcher.target = share;
    const id = watcher.stream.id;
    if (this.shares.size !== 1 || this.shares.get(id) !== share) {
      this.shares = new Map([[id, share]]);
      this.tokenParts = undefined;
    }
  }

  /** The assignment to send `stream` now (recorded as sent), or undefined without a rule. */
  assignmentFor(stream: S, nowMs: number): BucketAction | undefined {
    const watcher = this.watchers.get(stream);
    const rule = this.rule;
    if (watcher === undefined || rule === undefined) return undefined;
    const strategy = strategyOf(rule.policy, watcher.target, this.maxTokensOf(watcher));
    const ttlMs = this.ttlMsOf(watcher);
    watcher.sent = { share: watcher.target, atMs: nowMs, ttlMs };
    return { kind: 'assign', bucket: this.pairs, strategy, ttlMs };
  }

  /**
   * A watcher's whole part of the rule's max_tokens: the parts of every claim (local and remote)
   * add up to at most the rule's, so the Envoys' first burst together is at most it. Made once
   * per allocation, when an assignment is first sent after it: most reports send nothing.
   */
  private maxTokensOf(watcher: Watcher<S>): number {
    const policy = this.rule?.policy;
    if (policy?.kind !== 'budget') return 0;
    if (this.shares.size <= 1) return policy.maxTokens;
    this.tokenParts ??= wholeParts(policy.maxTokens, this.shares, policy.requestsPerUnit);
    return this.tokenParts.get(watcher.stream.id) ?? 0;
  }

  /**
   * Removes the watchers silent for longer than they may be (forgetAfterMs); returns them.
   */
  expire(nowMs: number): Watcher<S>[] {
    for (const w of this.watchers.values())
      if (w.keepsOwnUntilMs !== undefined && nowMs >= w.keepsOwnUntilMs)
        w.keepsOwnUntilMs = undefined;
    const silent = [...this.watchers.values()].filter(
      (w) => nowMs - w.lastReportMs > this.forgetAfterMs(w),
    );
    for (const w of silent) this.watchers.delete(w.stream);
    return silent;
  }

  /**
   * How long a watcher may be silent: longer than its TTL and than MIN_FORGET_MS (two of Envoy's
   * ticks and a margin), so an Envoy that reports is never forgotten whatever its TTL; before
   * its first periodic report, FIRST_REPORT_GRACE_MS.
   */
  private forgetAfterMs(watcher: Watcher<S>): number {
    const ms = Math.max(this.ttlMsOf(watcher), MIN_FORGET_MS);
    return watcher.hasMeasured ? ms : Math.max(ms, FIRST_REPORT_GRACE_MS);
  }

  /** Tells the watchers whose assignment is past a third of its TTL to take it again. */
  refresh(nowMs: number): void {
    for (const w of this.watchers.values()) {
      if (w.sent !== undefined && nowMs - w.sent.atMs >= w.sent.ttlMs * REFRESH_AFTER_TTL_PART)
        w.stream.needsSend(this);
    }
  }
}
