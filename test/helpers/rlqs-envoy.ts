// An RLQS client that behaves as Envoy's rate_limit_quota filter does, written from its source
// (envoyproxy/envoy, source/extensions/filters/http/rate_limit_quota/, read at these commits):
// - filter.cc @1736899: RateLimitQuotaFilter::recordBucketUsage (a new bucket: createBucket,
//   and the request decided by no_assignment_behavior, DENY_ALL alone denying it),
//   shouldAllowRequest (blanket rules; a token bucket consumes one token; RequestsPerTimeUnit
//   and an unset strategy let the request through), processCachedBucket.
// - global_client_impl.cc @c33e7f8: createBucketImpl (the stream and the report timer start
//   with the first bucket; a new bucket is reported at once, alone, with a time_elapsed of 0),
//   getUsageFromBucket (counts taken and reset; time_elapsed in whole seconds since the bucket
//   was last reported, nanos never set), buildReports (every cached bucket on each tick, none
//   after an abandon left the cache empty: the domain alone), onSendReportsTimer (a stream lost
//   is started again only here, at the next tick, and that tick's report is its first message;
//   a report that cannot be sent is dropped), onQuotaResponseImpl (abandon erases the bucket;
//   RequestsPerTimeUnit and an unset strategy are skipped, leaving the bucket as it was; a token
//   bucket equal to the one held in max_tokens, tokens_per_fill and fill_interval's nanos is
//   kept, seconds not compared), createTokenBucketFromAction (rate = tokens_per_fill /
//   ToInt64Seconds(fill_interval); a new bucket starts with the old one's share of its tokens),
//   startActionExpirationTimer (only the TTL's seconds), onActionExpirationTimer (to
//   expired_assignment_behavior's fallback_rate_limit for its timeout's seconds, without one
//   straight to no_assignment_behavior; reuse_last_assignment is not read),
//   onFallbackExpirationTimer, onRemoteClose.
// - filter_persistence.cc @93e15bf: initTlsStore (reports every 5000 ms whatever the bucket's
//   reporting_interval says).
// - source/common/common/token_bucket_impl.cc and .h (main, cb2a49b0): AtomicTokenBucketImpl
//   (tokens are the time since a moving instant times the rate, std::min(max_tokens, ...); a fill
//   rate of at least one a year, kMinFillRate). A fill interval of 0 s is an infinite rate:
//   0 s × infinity is NaN at the instant the bucket is made, and std::min(max, NaN) is max
//   (std::min returns its first argument unless the second is less), so every request finds
//   max_tokens and is let through.
// - test/.../integration_test.cc @b86c4d9: BasicFlowPeriodicalReport (the first report's
//   time_elapsed is 0), BasicFlowPeriodicalReportWithStreamClosed (a new stream at the next
//   tick), MultiSameRequestWithExpirationToDefaultDeny and the other expiry tests.
// Liberties: time is the injected clock's (milliseconds, fractions allowed) and the 5 s timer is
// the caller calling tick() (a test drives it directly, or on a short real interval it states);
// timers and responses are taken when the client is next used, in the order Envoy's dispatcher
// would have run them: a response at the time it arrived, after every expiry timer that fell
// due before it (the bucket expires, then the response makes a new full bucket); what Envoy
// posts to its main thread is done at once. One filter config (domain, one set of bucket
// settings) per client, as one Envoy listener.
import type { WireStrategy } from './rlqs-wire';
import type { RlqsCall, RlqsTransport, WireReports, WireResponse } from './rlqs-wire';

/** Envoy's fixed reporting interval (filter_persistence.cc). */
export const ENVOY_REPORT_INTERVAL_MS = 5000;

/** AtomicTokenBucketImpl's least fill rate: one token a year. */
const MIN_FILL_RATE = 1 / (365 * 24 * 60 * 60);

export interface BucketSettings {
  /** no_assignment_behavior.fallback_rate_limit; unset: ALLOW_ALL. */
  readonly noAssignment?: WireStrategy;
  /** expired_assignment_behavior with fallback_rate_limit (and its timeout's seconds). */
  readonly expired?: { readonly fallback: WireStrategy; readonly timeoutSeconds?: number };
}

/** C++'s std::min(a, b): `b < a ? b : a`, so a NaN second argument gives the first. */
const cppMin = (a: number, b: number): number => (b < a ? b : a);

/** AtomicTokenBucketImpl: the tokens are the time since `timeS` times the rate, capped. */
class TokenBucket {
  private timeS: number;

  constructor(
    readonly maxTokens: number,
    readonly fillRate: number,
    nowS: number,
    initialTokens: number,
  ) {
    this.timeS = nowS - initialTokens / fillRate;
  }

  remaining(nowS: number): number {
    return cppMin(this.maxTokens, (nowS - this.timeS) * this.fillRate);
  }

  /** consume(): one token when the bucket holds one (the template consume's callback). */
  consume(nowS: number): boolean {
    const total = this.remaining(nowS);
    if (!(total >= 1)) return false;
    this.timeS = nowS - (total - 1) / this.fillRate;
    return true;
  }
}

/** A CachedBucket: its id, usage since it was last reported, and what decides its requests. */
interface CachedBucket {
  readonly id: Readonly<Record<string, string>>;
  allowed: number;
  denied: number;
  lastReportMs: number;
  /** The assignment (or fallback) in force; undefined: the default action. */
  action: WireResponseAction | undefined;
  limiter: TokenBucket | undefined;
  /** When the action expires (startActionExpirationTimer), or the fallback does. */
  actionExpiresMs: number | undefined;
  fallbackExpiresMs: number | undefined;
}

type WireResponseAction = NonNullable<WireResponse['bucketAction']>[number];

/** The key Envoy's cache uses (MessageUtil::hash of the BucketId): the pairs, sorted. */
function keyOf(id: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(id).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function strategyOf(action: WireResponseAction | undefined): WireStrategy | undefined {
  return action?.quotaAssignmentAction?.rateLimitStrategy;
}

/** protoTokenBucketsEq: max_tokens, tokens_per_fill and fill_interval's nanos (not seconds). */
function isSameTokenBucket(a: WireStrategy | undefined, b: WireStrategy): boolean {
  const x = a?.tokenBucket;
  const y = b.tokenBucket;
  if (x === undefined || y === undefined) return false;
  return (
    (x.maxTokens ?? 0) === (y.maxTokens ?? 0) &&
    (x.tokensPerFill?.value ?? 0) === (y.tokensPerFill?.value ?? 0) &&
    (x.fillInterval?.nanos ?? 0) === (y.fillInterval?.nanos ?? 0)
  );
}

export interface EnvoyClientOptions {
  readonly domain: string;
  readonly transport: RlqsTransport;
  /** Milliseconds on a monotonic clock; fractions are kept. */
  readonly nowMs: () => number;
  readonly settings?: BucketSettings;
}

export class EnvoyRlqsClient {
  /** Requests let through and denied, since the start. */
  admitted = 0;
  denied = 0;
  /** Every report sent, in order, and every response taken. */
  readonly sent: WireReports[] = [];
  readonly received: WireResponse[] = [];
  /** Streams started (the first, and each one at a tick after a stream was lost). */
  streamsStarted = 0;
  /** How each stream ended: the status the server gave, in order. */
  readonly streamEnds: { readonly code: number; readonly details: string }[] = [];
  private readonly cache = new Map<string, CachedBucket>();
  /** Responses not taken yet, with when each arrived. */
  private readonly inbox: { readonly message: WireResponse; readonly atMs: number }[] = [];
  private stream: RlqsCall | undefined;
  private isStarted = false;

  constructor(private readonly options: EnvoyClientOptions) {}

  /** The bucket's cache entry, for tests: undefined when Envoy has none (new, or abandoned). */
  bucket(id: Readonly<Record<string, string>>): Readonly<CachedBucket> | undefined {
    this.settle();
    return this.cache.get(keyOf(id));
  }

  /** The rate a bucket's requests are let through at now: Infinity, 0, or its token bucket's. */
  rateOf(id: Readonly<Record<string, string>>): number {
    this.settle();
    const cached = this.cache.get(keyOf(id));
    const strategy =
      cached === undefined
        ? this.options.settings?.noAssignment
        : (strategyOf(cached.action) ?? this.defaultStrategy());
    if (strategy?.blanketRule === 'DENY_ALL') return 0;
    if (strategy?.tokenBucket !== undefined && cached?.limiter !== undefined)
      return cached.limiter.fillRate;
    return Infinity;
  }

  /** One request matched into bucket `id` (RateLimitQuotaFilter::recordBucketUsage). */
  request(id: Readonly<Record<string, string>>): boolean {
    this.settle();
    const cached = this.cache.get(keyOf(id));
    if (cached !== undefined) {
      const isAllowed = this.shouldAllow(cached);
      if (isAllowed) cached.allowed += 1;
      else cached.denied += 1;
      return this.count(isAllowed);
    }
    const noAssignment = this.options.settings?.noAssignment;
    const isAllowed = noAssignment?.blanketRule !== 'DENY_ALL';
    this.createBucket(id, isAllowed);
    return this.count(isAllowed);
  }

  /** The 5 s report timer fired (onSendReportsTimer); it runs only once a bucket was made. */
  tick(): void {
    this.settle();
    if (!this.isStarted) return;
    const reports = this.buildReports([...this.cache.values()]);
    if (this.stream === undefined) this.startStream();
    this.send(reports);
  }

  /**
   * Runs what fell due since the client was last used, in the order Envoy's dispatcher would:
   * each response at the time it arrived, after the expiry timers due before it; then the
   * timers due now.
   */
  settle(): void {
    for (let next = this.inbox.shift(); next !== undefined; next = this.inbox.shift()) {
      this.runTimers(next.atMs);
      this.onQuotaResponse(next.message, next.atMs);
    }
    this.runTimers(this.options.nowMs());
  }

  /** Drops the stream, as Envoy's shutdown does. */
  stop(): void {
    this.stream?.cancel();
    this.stream = undefined;
  }

  private count(isAllowed: boolean): boolean {
    if (isAllowed) this.admitted += 1;
    else this.denied += 1;
    return isAllowed;
  }

  private defaultStrategy(): WireStrategy {
    return this.options.settings?.noAssignment ?? { blanketRule: 'ALLOW_ALL' };
  }

  /** shouldAllowRequest: the cached action, else the default one. */
  private shouldAllow(cached: CachedBucket): boolean {
    const strategy =
      cached.action === undefined ? this.defaultStrategy() : strategyOf(cached.action);
    if (strategy?.blanketRule !== undefined) return strategy.blanketRule !== 'DENY_ALL';
    if (strategy?.tokenBucket !== undefined) {
      // Envoy dereferences the limiter: a token bucket as no_assignment_behavior crashes it.
      if (cached.limiter === undefined)
        throw new Error('Envoy would crash: a token bucket strategy without its limiter');
      return cached.limiter.consume(this.options.nowMs() / 1000);
    }
    // RequestsPerTimeUnit ("not yet supported") and an unset strategy: allowed.
    return true;
  }

  /** createBucketImpl. */
  private createBucket(id: Readonly<Record<string, string>>, isAllowed: boolean): void {
    if (!this.isStarted) {
      this.isStarted = true;
      this.startStream();
    }
    const bucket: CachedBucket = {
      id,
      allowed: isAllowed ? 1 : 0,
      denied: isAllowed ? 0 : 1,
      lastReportMs: this.options.nowMs(),
      action: undefined,
      limiter: undefined,
      actionExpiresMs: undefined,
      fallbackExpiresMs: undefined,
    };
    this.cache.set(keyOf(id), bucket);
    this.send(this.buildReports([bucket]));
  }

  /** buildReports with getUsageFromBucket: counts taken and reset, whole seconds elapsed. */
  private buildReports(buckets: readonly CachedBucket[]): WireReports {
    const nowMs = this.options.nowMs();
    const usages = buckets.map((b) => {
      const usage = {
        bucketId: { bucket: b.id },
        timeElapsed: { seconds: Math.trunc((nowMs - b.lastReportMs) / 1000) },
        numRequestsAllowed: b.allowed,
        numRequestsDenied: b.denied,
      };
      b.allowed = 0;
      b.denied = 0;
      b.lastReportMs = nowMs;
      return usage;
    });
    return { domain: this.options.domain, bucketQuotaUsages: usages };
  }

  /** sendUsageReportImpl: dropped when there is no stream. */
  private send(reports: WireReports): void {
    if (this.stream === undefined) return;
    this.sent.push(reports);
    this.stream.send(reports);
  }

  private startStream(): void {
    this.streamsStarted += 1;
    // A transport may end the stream inside open(): Envoy learns of it later, in onRemoteClose.
    const state: { call: RlqsCall | undefined; isOver: boolean } = {
      call: undefined,
      isOver: false,
    };
    state.call = this.options.transport.open({
      onMessage: (message) => {
        if (!state.isOver) this.inbox.push({ message, atMs: this.options.nowMs() });
      },
      // onRemoteClose: the stream is gone until the next tick starts another.
      onClose: (code, details) => {
        this.streamEnds.push({ code, details });
        state.isOver = true;
        if (this.stream !== undefined && this.stream === state.call) this.stream = undefined;
      },
    });
    this.stream = state.isOver ? undefined : state.call;
  }

  /** onQuotaResponseImpl, at `nowMs`, when the response arrived. */
  private onQuotaResponse(response: WireResponse, nowMs: number): void {
    this.received.push(response);
    for (const action of response.bucketAction ?? []) {
      const id = action.bucketId?.bucket;
      if (id === undefined || Object.keys(id).length === 0) continue;
      const key = keyOf(id);
      const cached = this.cache.get(key);
      if (cached === undefined) continue;
      let limiter: TokenBucket | undefined;
      if (action.quotaAssignmentAction !== undefined) {
        const strategy = action.quotaAssignmentAction.rateLimitStrategy;
        if (strategy?.blanketRule !== undefined) limiter = undefined;
        else if (strategy?.tokenBucket !== undefined)
          limiter = isSameTokenBucket(strategyOf(cached.action), strategy)
            ? cached.limiter
            : this.newLimiter(strategy, cached.limiter, nowMs);
        else continue; // RequestsPerTimeUnit, or no strategy: skipped, the bucket unchanged.
      } else if (action.abandonAction !== undefined) {
        this.cache.delete(key);
        continue;
      }
      cached.action = action;
      cached.limiter = limiter;
      cached.fallbackExpiresMs = undefined;
      const ttlSeconds = action.quotaAssignmentAction?.assignmentTimeToLive?.seconds ?? 0;
      cached.actionExpiresMs = nowMs + ttlSeconds * 1000;
    }
  }

  /** createTokenBucketFromAction. */
  private newLimiter(
    strategy: WireStrategy,
    existing: TokenBucket | undefined,
    nowMs: number,
  ): TokenBucket {
    const tb = strategy.tokenBucket ?? {};
    const seconds = Math.trunc(
      (tb.fillInterval?.seconds ?? 0) + (tb.fillInterval?.nanos ?? 0) / 1e9,
    );
    // A double divided by an int64 0 is infinite in C++, as here.
    const rate = Math.max(Math.abs((tb.tokensPerFill?.value ?? 0) / seconds), MIN_FILL_RATE);
    const maxTokens = tb.maxTokens ?? 0;
    const nowS = nowMs / 1000;
    // A uint64_t in Envoy: a fraction is dropped (a NaN, from a 0 max_tokens, taken as 0).
    const ratio = existing === undefined ? 1 : existing.remaining(nowS) / existing.maxTokens;
    const initial = Number.isFinite(ratio) ? Math.trunc(maxTokens * ratio) : 0;
    return new TokenBucket(maxTokens, rate, nowS, initial);
  }

  /** The expiry timers due at `nowMs`, in the order they fell due (onAction/FallbackExpirationTimer). */
  private runTimers(nowMs: number): void {
    for (const cached of this.cache.values()) {
      if (cached.actionExpiresMs !== undefined && cached.actionExpiresMs <= nowMs) {
        const firedMs = cached.actionExpiresMs;
        cached.actionExpiresMs = undefined;
        const expired = this.options.settings?.expired;
        if (expired === undefined) {
          cached.action = undefined;
          cached.limiter = undefined;
        } else {
          const fallback = expired.fallback;
          const held = strategyOf(cached.action);
          cached.limiter =
            fallback.tokenBucket === undefined
              ? undefined
              : isSameTokenBucket(held, fallback)
                ? cached.limiter
                : this.newLimiter(fallback, cached.limiter, firedMs);
          cached.action = { quotaAssignmentAction: { rateLimitStrategy: fallback } };
          cached.fallbackExpiresMs = firedMs + (expired.timeoutSeconds ?? 0) * 1000;
        }
      }
      if (cached.fallbackExpiresMs !== undefined && cached.fallbackExpiresMs <= nowMs) {
        cached.fallbackExpiresMs = undefined;
        cached.action = undefined;
        cached.limiter = undefined;
      }
    }
  }
}
