// The decision engine: rules → cache keys → counter store → statuses, headers and statistics.
import type { ConfigSnapshot, MatchedLimit } from '../config';
import { BackendError } from '../lib/backend-error';
import type { Clock } from '../lib/clock';
import type { Logger } from '../lib/logger';
import type { LimiterSettings } from '../settings';
import { STAT, type Counter, type StatsStore } from '../stats';
import type { CounterIncrement, CounterStore } from '../store';
import { cacheKey } from './cache-key';
import { classify } from './decide';
import { RequestError } from './errors';
import { limitHeaders, perUnitHeaders } from './headers';
import type { OverLimitCache } from './local-cache';
import { dynamicMetadata } from './metadata';
import {
  MAX_UINT32,
  type Code,
  type DescriptorStatus,
  type HeaderValue,
  type RateLimitRequest,
  type RateLimitResponse,
} from './types';
import { windowOf, type Window } from './windows';

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
}

/** What the engine works out for one descriptor before talking to the store. */
interface Plan {
  readonly limit: MatchedLimit | undefined;
  readonly isUnlimited: boolean;
  readonly hits: number;
  readonly key: string;
  readonly window: Window | undefined;
  isOverInLocalCache: boolean;
  /** Hits actually sent to the store (0 when stop-increment holds them back). */
  sentHits: number;
  /** Index of this descriptor's item in the store batch, or -1. */
  batchIndex: number;
}

const EMPTY_HEADERS: readonly HeaderValue[] = Object.freeze([]);

/**
 * Answers ShouldRateLimit. Holds the current snapshot; the provider's listener swaps it with
 * one assignment, and a request keeps the snapshot it started with.
 */
export class RateLimitEngine {
  private snapshot: ConfigSnapshot | undefined;
  private readonly random: () => number;
  private readonly globalShadowMode: Counter;
  private readonly redisError: Counter;
  private readonly serviceError: Counter;

  constructor(private readonly deps: EngineDependencies) {
    this.random = deps.random ?? Math.random;
    this.globalShadowMode = deps.stats.counter(STAT.globalShadowMode);
    this.redisError = deps.stats.counter(STAT.redisError);
    this.serviceError = deps.stats.counter(STAT.serviceError);
  }

  /** The snapshot requests are answered from; undefined until the first load. */
  get currentSnapshot(): ConfigSnapshot | undefined {
    return this.snapshot;
  }

  setSnapshot(snapshot: ConfigSnapshot): void {
    this.snapshot = snapshot;
  }

  /**
   * Decides a request. Rejects with RequestError for a request that cannot be answered
   * (counted as service_error) and with the store's StoreError when the backend fails
   * (counted as redis_error, the reference's name for any backend error).
   */
  async shouldRateLimit(request: RateLimitRequest): Promise<RateLimitResponse> {
    try {
      return await this.decide(request);
    } catch (err: unknown) {
      if (err instanceof RequestError) this.serviceError.inc();
      else if (err instanceof BackendError) this.redisError.inc();
      throw err;
    }
  }

  private plan(request: RateLimitRequest, snapshot: ConfigSnapshot): Plan[] {
    const settings = this.deps.settings;
    const descriptors = request.descriptors;
    const nowSeconds = Math.floor(this.deps.clock.nowMs() / 1000);
    const requestHits = Math.max(1, request.hitsAddend);
    if (!snapshot.hasDomain(request.domain)) {
      const notFound = this.deps.stats.runtimeCounter(STAT.domainNotFound(request.domain));
      notFound.add(descriptors.length);
    }
    const plans: Plan[] = new Array<Plan>(descriptors.length);
    let replacing: Set<string> | undefined;
    for (let i = 0; i < descriptors.length; i++) {
      const descriptor = descriptors[i];
      if (descriptor === undefined) continue;
      let limit = snapshot.findLimit(request.domain, descriptor);
      let isUnlimited = false;
      if (limit !== undefined) {
        for (const name of limit.rule.replaces) (replacing ??= new Set()).add(name);
        if (limit.rule.isUnlimited) isUnlimited = true;
      }
      const hits = descriptor.hitsAddend ?? requestHits;
      if (isUnlimited || limit === undefined) {
        if (isUnlimited && limit !== undefined) {
          limit.stats.totalHits.add(hits);
          limit.stats.withinLimit.add(hits);
        }
        limit = undefined;
      }
      plans[i] = {
        limit,
        isUnlimited,
        hits,
        key: '',
        window: undefined,
        isOverInLocalCache: false,
        sentHits: 0,
        batchIndex: -1,
      };
    }
    for (const plan of plans) {
      const name = plan.limit?.rule.name;
      if (replacing !== undefined && name !== undefined && replacing.has(name)) {
        (plan as { limit: MatchedLimit | undefined }).limit = undefined;
      }
    }
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i];
      const descriptor = descriptors[i];
      const limit = plan?.limit;
      const unit = limit?.rule.unit;
      if (
        plan === undefined ||
        descriptor === undefined ||
        limit === undefined ||
        unit === undefined
      )
        continue;
      const window = windowOf(unit, nowSeconds, settings.useCalendarMonth);
      const mutable = plan as { key: string; window: Window | undefined };
      mutable.window = window;
      mutable.key = cacheKey(
        settings.cacheKeyPrefix,
        request.domain,
        descriptor.entries,
        limit.sharedValues,
        window.startSeconds,
      );
      if (descriptor.isNegativeHits) {
        limit.stats.totalNegativeHits.add(plan.hits);
      } else {
        limit.stats.totalHits.add(plan.hits);
        if (this.deps.localCache?.has(plan.key) === true) plan.isOverInLocalCache = true;
      }
    }
    return plans;
  }

  private ttlSeconds(window: Window): number {
    const max = this.deps.settings.expirationJitterMaxSeconds;
    return window.expirySeconds + (max > 0 ? Math.floor(this.random() * max) : 0);
  }

  /**
   * STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: when any key is over in the local cache, or any
   * would pass its limit with these hits, only the keys that would pass are counted.
   */
  private async holdBackHits(request: RateLimitRequest, plans: Plan[]): Promise<void> {
    const counted = plans.filter(
      (p, i) =>
        p.limit !== undefined &&
        !p.isOverInLocalCache &&
        request.descriptors[i]?.isNegativeHits !== true,
    );
    if (counted.length === 0) return;
    let isAnyOver = plans.some((p) => p.isOverInLocalCache);
    let wouldPass: boolean[] = counted.map(() => false);
    if (!isAnyOver) {
      const current = await this.deps.store.read(
        counted.map((p) => ({ key: p.key, isPerSecond: p.limit?.rule.unit === 'SECOND' })),
      );
      wouldPass = counted.map(
        (p, j) => (current[j] ?? 0) + p.hits > (p.limit?.rule.requestsPerUnit ?? 0),
      );
      isAnyOver = wouldPass.some((w) => w);
    }
    if (!isAnyOver) return;
    counted.forEach((p, j) => {
      if (wouldPass[j] !== true) p.sentHits = 0;
    });
  }

  private async decide(request: RateLimitRequest): Promise<RateLimitResponse> {
    if (request.domain === '') throw new RequestError('EMPTY_DOMAIN');
    if (request.descriptors.length === 0) throw new RequestError('NO_DESCRIPTORS');
    const snapshot = this.snapshot;
    if (snapshot === undefined) throw new RequestError('NO_CONFIG');
    const settings = this.deps.settings;

    const plans = this.plan(request, snapshot);
    for (const plan of plans) plan.sentHits = plan.hits;
    if (settings.stopCacheKeyIncrementWhenOverlimit) await this.holdBackHits(request, plans);

    const batch: CounterIncrement[] = [];
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i];
      if (plan?.limit === undefined || plan.window === undefined || plan.isOverInLocalCache)
        continue;
      plan.batchIndex = batch.length;
      batch.push({
        key: plan.key,
        hits: plan.sentHits,
        ttlSeconds: this.ttlSeconds(plan.window),
        isPerSecond: plan.limit.rule.unit === 'SECOND',
        isNegative: request.descriptors[i]?.isNegativeHits === true,
      });
    }
    const values = batch.length === 0 ? [] : await this.deps.store.increment(batch);
    return this.respond(request, plans, values);
  }

  private statusOf(
    request: RateLimitRequest,
    index: number,
    plan: Plan,
    values: readonly number[],
  ): DescriptorStatus {
    const limit = plan.limit;
    const unit = limit?.rule.unit;
    if (limit === undefined || unit === undefined || plan.window === undefined) {
      return plan.isUnlimited
        ? {
            code: 'OK',
            currentLimit: undefined,
            limitRemaining: MAX_UINT32,
            durationUntilResetSeconds: undefined,
          }
        : {
            code: 'OK',
            currentLimit: undefined,
            limitRemaining: 0,
            durationUntilResetSeconds: undefined,
          };
    }
    const rule = limit.rule;
    const stats = limit.stats;
    const currentLimit = { requestsPerUnit: rule.requestsPerUnit, unit, name: rule.name };
    const reset = plan.window.resetSeconds;
    if (plan.isOverInLocalCache) {
      stats.overLimit.add(plan.hits);
      stats.overLimitWithLocalCache.add(plan.hits);
      if (rule.isShadow) stats.shadowMode.add(plan.hits);
      return {
        code: rule.isShadow ? 'OK' : 'OVER_LIMIT',
        currentLimit,
        limitRemaining: 0,
        durationUntilResetSeconds: reset,
      };
    }
    const after = values[plan.batchIndex] ?? 0;
    if (request.descriptors[index]?.isNegativeHits === true) {
      // A refund never fails a request and has no over-limit side effects.
      return {
        code: 'OK',
        currentLimit,
        limitRemaining: Math.max(0, rule.requestsPerUnit - after),
        durationUntilResetSeconds: reset,
      };
    }
    // Held-back hits (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) split near/over as if they had
    // landed on the unchanged value, as the reference's statistics do.
    const before = after - plan.hits;
    const c = classify(
      rule.requestsPerUnit,
      before,
      after,
      plan.hits,
      this.deps.settings.nearLimitRatio,
      rule.isShadow,
    );
    if (c.nearLimitHits > 0) stats.nearLimit.add(c.nearLimitHits);
    if (c.overLimitHits > 0) stats.overLimit.add(c.overLimitHits);
    if (c.withinLimitHits > 0) stats.withinLimit.add(c.withinLimitHits);
    if (c.shadowHits > 0) stats.shadowMode.add(c.shadowHits);
    if (c.isOverLimit) this.deps.localCache?.add(plan.key, reset);
    const code: Code = c.isOverLimit && !rule.isShadow ? 'OVER_LIMIT' : 'OK';
    return {
      code,
      currentLimit,
      limitRemaining: c.limitRemaining,
      durationUntilResetSeconds: reset,
    };
  }

  private respond(
    request: RateLimitRequest,
    plans: readonly Plan[],
    values: readonly number[],
  ): RateLimitResponse {
    const settings = this.deps.settings;
    const statuses: DescriptorStatus[] = new Array<DescriptorStatus>(plans.length);
    let closest: DescriptorStatus | undefined;
    let failedRateLimit = 0;
    let failedQuota = 0;
    let totalQuota = 0;
    const passed: number[] = [];
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i];
      if (plan === undefined) continue;
      const status = this.statusOf(request, i, plan, values);
      statuses[i] = status;
      if (plan.isUnlimited) continue;
      if (
        status.currentLimit !== undefined &&
        (closest === undefined || status.limitRemaining < closest.limitRemaining)
      ) {
        closest = status;
      }
      const isQuota = settings.globalQuotaMode || plan.limit?.rule.isQuota === true;
      if (isQuota) totalQuota += 1;
      if (status.code === 'OVER_LIMIT') {
        if (isQuota) failedQuota += 1;
        else {
          failedRateLimit += 1;
          // An over-limit rate limit always describes the response, whatever came before.
          closest = status;
        }
      } else {
        passed.push(i);
      }
    }
    let overallCode: Code =
      failedRateLimit > 0 || (totalQuota > 0 && totalQuota === failedQuota) ? 'OVER_LIMIT' : 'OK';
    if (overallCode === 'OVER_LIMIT' && settings.globalShadowMode) {
      overallCode = 'OK';
      this.globalShadowMode.inc();
    }

    let responseHeadersToAdd: readonly HeaderValue[] = EMPTY_HEADERS;
    if (settings.responseHeaders.enabled || settings.responseHeaders.perUnit) {
      const headers: HeaderValue[] = [];
      if (settings.responseHeaders.enabled && closest !== undefined)
        headers.push(...limitHeaders(closest, settings.responseHeaders));
      if (settings.responseHeaders.perUnit)
        headers.push(...perUnitHeaders(statuses, settings.responseHeaders));
      responseHeadersToAdd = headers;
    }
    const requestHeadersToAdd =
      settings.requestHeaders.enabled && closest !== undefined
        ? limitHeaders(closest, settings.requestHeaders)
        : EMPTY_HEADERS;
    return {
      overallCode,
      statuses,
      responseHeadersToAdd,
      requestHeadersToAdd,
      dynamicMetadata: settings.responseDynamicMetadata
        ? dynamicMetadata(
            request,
            passed,
            plans.map((p) => p.limit),
          )
        : undefined,
    };
  }
}
