// What every algorithm's check shares: the request's hit counting, the local-cache answer,
// turning a classification into statistics and a status, and keeping refusals for operators.
import type { MatchedLimit, RuleLimit } from '../config';
import type { RuleStats } from '../stats';
import { classify, type Classification } from './decide';
import type { CheckEnv, CheckInput } from './limit-check';
import type { CurrentLimit, DescriptorStatus } from './types';

/** The limit as the response's current_limit shows it. */
export function currentLimitOf(limit: RuleLimit): CurrentLimit {
  return { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit, name: limit.name };
}

/** Counts the request's hits as total (or total negative) hits of the limit. */
export function countRequest(stats: RuleStats, hits: number, isNegative: boolean): void {
  if (isNegative) stats.totalNegativeHits.add(hits);
  else stats.totalHits.add(hits);
}

/**
 * The answer for a limit the local cache knows to be over: no store, all hits over, the
 * refusal kept for operators.
 */
export function overInLocalCache(
  input: CheckInput,
  env: CheckEnv,
  resetSeconds: number,
): DescriptorStatus {
  const { isShadow } = input.matched.rule;
  const stats = input.stats;
  recordOver(env, input, 0, true);
  stats.overLimit.add(input.hits);
  stats.overLimitWithLocalCache.add(input.hits);
  if (isShadow) stats.shadowMode.add(input.hits);
  return {
    code: isShadow ? 'OK' : 'OVER_LIMIT',
    currentLimit: currentLimitOf(input.limit),
    limitRemaining: 0,
    durationUntilResetSeconds: resetSeconds,
  };
}

/** Adds a classification's near/over/within/shadow hits to the limit's statistics. */
export function addClassified(stats: RuleStats, c: Classification): void {
  if (c.nearLimitHits > 0) stats.nearLimit.add(c.nearLimitHits);
  if (c.overLimitHits > 0) stats.overLimit.add(c.overLimitHits);
  if (c.withinLimitHits > 0) stats.withinLimit.add(c.withinLimitHits);
  if (c.shadowHits > 0) stats.shadowMode.add(c.shadowHits);
}

/**
 * Judges a request's hits against a counter that went from `before` to `after` (every
 * algorithm reads its state as one) and adds the near/over/within split to the statistics.
 */
export function judgeHits(
  input: CheckInput,
  env: CheckEnv,
  max: number,
  before: number,
  after: number,
): Classification {
  const c = classify(
    max,
    before,
    after,
    input.hits,
    env.settings.nearLimitRatio,
    input.matched.rule.isShadow,
  );
  addClassified(input.stats, c);
  return c;
}

/** A refund's answer: it never fails a request and has no over-limit side effects. */
export function refundStatus(
  limit: RuleLimit,
  limitRemaining: number,
  resetSeconds: number,
): DescriptorStatus {
  return {
    code: 'OK',
    currentLimit: currentLimitOf(limit),
    limitRemaining,
    durationUntilResetSeconds: resetSeconds,
  };
}

/** The status of a counted limit; shadow mode answers OK whatever the count. */
export function countedStatus(
  matched: MatchedLimit,
  limit: RuleLimit,
  isOverLimit: boolean,
  limitRemaining: number,
  resetSeconds: number,
): DescriptorStatus {
  return {
    code: isOverLimit && !matched.rule.isShadow ? 'OVER_LIMIT' : 'OK',
    currentLimit: currentLimitOf(limit),
    limitRemaining,
    durationUntilResetSeconds: resetSeconds,
  };
}

/** Keeps an over-limit decision (shadow mode's too) for the debug listener, when it keeps any. */
export function recordOver(
  env: CheckEnv,
  input: CheckInput,
  remaining: number,
  isFromLocalCache: boolean,
): void {
  env.recentDecisions?.record({
    domain: input.domain,
    entries: input.descriptor.entries,
    limit: input.matched,
    ruleLimit: input.limit,
    hits: input.hits,
    remaining,
    isShadow: input.matched.rule.isShadow || env.settings.globalShadowMode,
    isFromLocalCache,
  });
}
