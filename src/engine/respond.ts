// The respond step: from every descriptor's status to the overall code, headers and metadata.
import type { JsonObject } from '../config';
import type { LimiterSettings } from '../settings';
import type { Counter } from '../stats';
import { requestHeaders, responseHeaders } from './headers';
import { ietfHeaders } from './ietf-headers';
import type { CheckEnv, DescriptorPlan } from './limit-check';
import { dynamicMetadata } from './metadata';
import type { StoreResults } from './store-batch';
import type {
  Code,
  DescriptorStatus,
  HeaderValue,
  RateLimitRequest,
  RateLimitResponse,
} from './types';

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

const NO_HEADERS: readonly HeaderValue[] = Object.freeze([]);

/** The headers the settings ask for, in the format they ask for. */
function headersOf(
  plans: readonly DescriptorPlan[],
  statuses: readonly DescriptorStatus[],
  settings: LimiterSettings,
): { response: readonly HeaderValue[]; request: readonly HeaderValue[] } {
  const { responseHeaders: response, requestHeaders: request } = settings;
  if (settings.headersFormat === 'ietf') {
    if (!response.enabled && !request.enabled) return { response: NO_HEADERS, request: NO_HEADERS };
    const fields = ietfHeaders(plans.flatMap((p) => (p.kind === 'check' ? p.reports() : [])));
    return {
      response: response.enabled ? fields : NO_HEADERS,
      request: request.enabled ? fields : NO_HEADERS,
    };
  }
  const closest =
    response.enabled || request.enabled ? closestStatus(plans, statuses, settings) : undefined;
  // Per-unit headers see every limit of a descriptor with several.
  const perUnit = response.perUnit ? limitStatuses(plans, statuses) : statuses;
  return {
    response: responseHeaders(settings, closest, perUnit),
    request: requestHeaders(settings, closest),
  };
}

/** Each limit's status: a descriptor's own, or each of its limits' when it has several. */
function limitStatuses(
  plans: readonly DescriptorPlan[],
  statuses: readonly DescriptorStatus[],
): DescriptorStatus[] {
  return plans.flatMap((plan, i) => {
    if (plan.kind !== 'check') return statuses[i] === undefined ? [] : [statuses[i]];
    return plan.reports().map((r) => r.status);
  });
}

/** Every descriptor's status once the store answered with `results`, then the response. */
export function respond(
  request: RateLimitRequest,
  plans: readonly DescriptorPlan[],
  results: StoreResults,
  env: RespondEnv,
): RateLimitResponse {
  const settings = env.settings;
  const statuses = new Array<DescriptorStatus>(plans.length);
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i];
    if (plan !== undefined)
      statuses[i] = plan.kind === 'check' ? plan.status(results, env) : plan.status;
  }
  let code = overallCode(plans, statuses, settings);
  if (code === 'OVER_LIMIT' && settings.globalShadowMode) {
    code = 'OK';
    env.globalShadowMode.inc();
  }
  const headers = headersOf(plans, statuses, settings);
  return {
    overallCode: code,
    statuses,
    responseHeadersToAdd: headers.response,
    requestHeadersToAdd: headers.request,
    dynamicMetadata: settings.responseDynamicMetadata
      ? dynamicMetadata(request, passedMetadata(plans, statuses))
      : undefined,
  };
}
