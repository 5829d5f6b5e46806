// The respond step: from every descriptor's status to the overall code, headers and metadata.
import type { JsonObject } from '../config';
import type { LimiterSettings } from '../settings';
import type { Counter } from '../stats';
import { requestHeaders, responseHeaders } from './headers';
import type { CheckEnv, DescriptorPlan } from './limit-check';
import { dynamicMetadata } from './metadata';
import type { Code, DescriptorStatus, RateLimitRequest, RateLimitResponse } from './types';

/** What answering reads besides the request; one object for the engine's lifetime. */
export interface RespondEnv extends CheckEnv {
  /** Counts requests GLOBAL_SHADOW_MODE let through. */
  readonly globalShadowMode: Counter;
}

function isQuota(plan: DescriptorPlan, settings: LimiterSettings): boolean {
  return settings.globalQuotaMode || (plan.kind === 'check' && plan.limit.rule.isQuota);
}

/**
 * OVER_LIMIT when a rate limit is over, or when every quota is (quota mode); unlimited rules
 * take no part.
 */
function overallCode(
  plans: readonly DescriptorPlan[],
  statuses: readonly DescriptorStatus[],
  settings: LimiterSettings,
): Code {
  let failedRateLimit = 0;
  let failedQuota = 0;
  let totalQuota = 0;
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    if (plan === undefined || plan.kind === 'unlimited') continue;
    const quota = isQuota(plan, settings);
    if (quota) totalQuota += 1;
    if (statuses[i]?.code !== 'OVER_LIMIT') continue;
    if (quota) failedQuota += 1;
    else failedRateLimit += 1;
  }
  return failedRateLimit > 0 || (totalQuota > 0 && totalQuota === failedQuota)
    ? 'OVER_LIMIT'
    : 'OK';
}

/**
 * The status the headers describe: the limited one with the least remaining, except that an
 * over-limit rate limit always does (the last of them).
 */
function closestStatus(
  plans: readonly DescriptorPlan[],
  statuses: readonly DescriptorStatus[],
  settings: LimiterSettings,
): DescriptorStatus | undefined {
  let closest: DescriptorStatus | undefined;
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    const status = statuses[i];
    if (plan === undefined || status === undefined || plan.kind === 'unlimited') continue;
    if (
      status.currentLimit !== undefined &&
      (closest === undefined || status.limitRemaining < closest.limitRemaining)
    )
      closest = status;
    if (status.code === 'OVER_LIMIT' && !isQuota(plan, settings)) closest = status;
  }
  return closest;
}

/** The metadata of the rules whose descriptors were let through, in request order. */
function passedMetadata(
  plans: readonly DescriptorPlan[],
  statuses: readonly DescriptorStatus[],
): JsonObject[] {
  const out: JsonObject[] = [];
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    if (plan?.kind !== 'check' || statuses[i]?.code === 'OVER_LIMIT') continue;
    const metadata = plan.limit.rule.metadata;
    if (metadata !== undefined) out.push(metadata);
  }
  return out;
}

/** Every descriptor's status once the store answered with `values`, then the response. */
export function respond(
  request: RateLimitRequest,
  plans: readonly DescriptorPlan[],
  values: readonly number[],
  env: RespondEnv,
): RateLimitResponse {
  const settings = env.settings;
  const statuses = new Array<DescriptorStatus>(plans.length);
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    if (plan !== undefined)
      statuses[i] = plan.kind === 'check' ? plan.status(values, env) : plan.status;
  }
  let code = overallCode(plans, statuses, settings);
  if (code === 'OVER_LIMIT' && settings.globalShadowMode) {
    code = 'OK';
    env.globalShadowMode.inc();
  }
  const hasHeaders = settings.responseHeaders.enabled || settings.requestHeaders.enabled;
  const closest = hasHeaders ? closestStatus(plans, statuses, settings) : undefined;
  return {
    overallCode: code,
    statuses,
    responseHeadersToAdd: responseHeaders(settings, closest, statuses),
    requestHeadersToAdd: requestHeaders(settings, closest),
    dynamicMetadata: settings.responseDynamicMetadata
      ? dynamicMetadata(request, passedMetadata(plans, statuses))
      : undefined,
  };
}
