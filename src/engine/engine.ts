// The decision engine: rules → cache keys → counter store → statuses, headers and statistics.
// A request goes through four steps, each in its own module: plan (plan.ts, one check per
// limited descriptor: fixed-window.ts, sliding-window.ts, token-bucket.ts, multi-limit.ts), hold
// back (stop-increment.ts), count (store-batch.ts), respond (respond.ts). Operators' reads
// (inspect.ts, recent-decisions.ts) sit beside them.
import type { ConfigSnapshot, DescriptorEntry } from '../config';
import { BackendError } from '../lib/backend-error';
import type { Clock } from '../lib/clock';
import type { Logger } from '../lib/logger';
import { andThen, isPromise, type Pending } from '../lib/pending';
import type { LimiterSettings } from '../settings';
import { STAT, type Counter, type StatsStore } from '../stats';
import type { CounterStore } from '../store';
import { RequestError } from './errors';
import { readCounters, type CounterLookup } from './inspect';
import type { DescriptorPlan } from './limit-check';
import type { OverLimitCache } from './local-cache';
import { planRequest, type PlanEnv } from './plan';
import type { RecentDecisions } from './recent-decisions';
import { respond, type RespondEnv } from './respond';
import { holdBackHits } from './stop-increment';
import { sendBatch, StoreBatch, type StoreResults } from './store-batch';
import type { RateLimitRequest, RateLimitResponse } from './types';

export interface EngineDependencies {
  readonly store: CounterStore;
  readonly stats: StatsStore;
  readonly clock: Clock;
  readonly settings: LimiterSettings;
  readonly logger: Logger;
  /** The local over-limit cache; undefined when LOCAL_CACHE_SIZE_IN_BYTES is 0. */
  readonly localCache: OverLimitCache | undefined;
  /** Uniform in [0, 1); injected so tests can fix the expiry jitter. */
  readonly random?: () => number;
  /** Where over-limit decisions are kept for the debug listener; none when omitted. */
  readonly recentDecisions?: RecentDecisions;
}

/**
 * Answers ShouldRateLimit. Holds the current snapshot; the provider's listener swaps it with
 * one assignment, and a request keeps the snapshot it started with.
 */
export class RateLimitEngine {
  private snapshot: ConfigSnapshot | undefined;
  private readonly env: PlanEnv & RespondEnv;
  private readonly redisError: Counter;
  private readonly serviceError: Counter;
  /** Seconds added to a key's expiry, below EXPIRATION_JITTER_MAX_SECONDS. */
  private readonly ttlJitterSeconds: () => number;

  constructor(private readonly deps: EngineDependencies) {
    this.env = {
      settings: deps.settings,
      localCache: deps.localCache,
      recentDecisions: deps.recentDecisions,
      stats: deps.stats,
      globalShadowMode: deps.stats.counter(STAT.globalShadowMode),
    };
    this.redisError = deps.stats.counter(STAT.redisError);
    this.serviceError = deps.stats.counter(STAT.serviceError);
    const random = deps.random ?? Math.random;
    const max = deps.settings.expirationJitterMaxSeconds;
    this.ttlJitterSeconds = max > 0 ? () => Math.floor(random() * max) : () => 0;
  }

  /** The snapshot requests are answered from; undefined until the first load. */
  get currentSnapshot(): ConfigSnapshot | undefined {
    return this.snapshot;
  }

  setSnapshot(snapshot: ConfigSnapshot): void {
    this.snapshot = snapshot;
  }

  /** The last over-limit decisions; undefined when DEBUG_RECENT_DECISIONS is 0. */
  get recentDecisions(): RecentDecisions | undefined {
    return this.deps.recentDecisions;
  }

  /**
   * The counters each descriptor (a list of entries) of `domain` feeds now, read from the
   * store without counting; for operators, never for requests.
   */
  readCounters(
    domain: string,
    descriptors: readonly (readonly DescriptorEntry[])[],
  ): Promise<CounterLookup> {
    return readCounters(this.snapshot, domain, descriptors, this.deps.clock.nowMs(), this.deps);
  }

  /**
   * Decides a request: the response now when the store answers in the calling turn (memory),
   * else a promise of it. Fails (throws now, or rejects) with RequestError for a request that
   * cannot be answered (counted as service_error) and with the store's StoreError when the
   * backend fails (counted as redis_error, the reference's name for any backend error).
   */
  shouldRateLimit(request: RateLimitRequest): Pending<RateLimitResponse> {
    try {
      return this.decide(request);
    } catch (err: unknown) {
      throw this.counted(err);
    }
  }

  /** `err` after counting it as service_error or redis_error, as its kind says. */
  private counted(err: unknown): unknown {
    if (err instanceof RequestError) this.serviceError.inc();
    else if (err instanceof BackendError) this.redisError.inc();
    return err;
  }

  private readonly rethrowCounted = (err: unknown): never => {
    throw this.counted(err);
  };

  /** Plan, hold back, count, respond: each step as soon as the one before has answered. */
  private decide(request: RateLimitRequest): Pending<RateLimitResponse> {
    const plans = this.plan(request);
    const counted = this.deps.settings.stopCacheKeyIncrementWhenOverlimit
      ? andThen(holdBackHits(this.deps.store, plans), () => this.count(plans))
      : this.count(plans);
    if (!isPromise(counted)) return respond(request, plans, counted, this.env);
    // A rejection anywhere before is counted here, in the one then() the promise path adds.
    return counted.then(
      (results) => respond(request, plans, results, this.env),
      this.rethrowCounted,
    );
  }

  private count(plans: readonly DescriptorPlan[]): Pending<StoreResults> {
    return sendBatch(this.deps.store, this.batchOf(plans));
  }

  /** One check per limited descriptor, against the snapshot of this moment. */
  private plan(request: RateLimitRequest): DescriptorPlan[] {
    if (request.domain === '') throw new RequestError('EMPTY_DOMAIN');
    if (request.descriptors.length === 0) throw new RequestError('NO_DESCRIPTORS');
    const snapshot = this.snapshot;
    if (snapshot === undefined) throw new RequestError('NO_CONFIG');
    return planRequest(request, snapshot, this.deps.clock.nowMs(), this.env);
  }

  /** Every check's changes, for the store in one batch. */
  private batchOf(plans: readonly DescriptorPlan[]): StoreBatch {
    const batch = new StoreBatch(this.ttlJitterSeconds);
    for (const plan of plans) if (plan.kind === 'check') plan.addTo(batch);
    return batch;
  }
}
