// The plan step: which limit applies to each descriptor of a request, and how it is counted.
import type { ConfigSnapshot, MatchedLimit } from '../config';
import { MAX_UINT32 } from '../lib/uint32';
import { STAT, type StatsStore } from '../stats';
import { FixedWindowCheck } from './fixed-window';
import type { CheckEnv, DescriptorPlan, NotCounted } from './limit-check';
import type { RateLimitRequest, RequestDescriptor } from './types';

/** What planning reads besides the request; one object for the engine's lifetime. */
export interface PlanEnv extends CheckEnv {
  readonly stats: StatsStore;
}

// Shared and frozen: most descriptors of a request need no object of their own.
const NO_LIMIT: NotCounted = Object.freeze({
  kind: 'no-limit',
  status: Object.freeze({
    code: 'OK',
    currentLimit: undefined,
    limitRemaining: 0,
    durationUntilResetSeconds: undefined,
  }),
});
const UNLIMITED: NotCounted = Object.freeze({
  kind: 'unlimited',
  status: Object.freeze({
    code: 'OK',
    currentLimit: undefined,
    limitRemaining: MAX_UINT32,
    durationUntilResetSeconds: undefined,
  }),
});

/**
 * The limit of each descriptor, undefined where none applies. A limited rule named in the
 * `replaces` of any rule the request matched applies to no descriptor.
 */
function matchLimits(
  request: RateLimitRequest,
  snapshot: ConfigSnapshot,
): (MatchedLimit | undefined)[] {
  const descriptors = request.descriptors;
  const limits = new Array<MatchedLimit | undefined>(descriptors.length);
  let replaced: Set<string> | undefined;
  for (let i = 0; i < descriptors.length; i++) {
    const descriptor = descriptors[i];
    if (descriptor === undefined) continue;
    const limit = snapshot.findLimit(request.domain, descriptor);
    limits[i] = limit;
    if (limit !== undefined)
      for (const name of limit.rule.replaces) (replaced ??= new Set()).add(name);
  }
  if (replaced === undefined) return limits;
  for (let i = 0; i < limits.length; i++) {
    const rule = limits[i]?.rule;
    if (rule?.name !== undefined && !rule.isUnlimited && replaced.has(rule.name))
      limits[i] = undefined;
  }
  return limits;
}

/** One descriptor's plan; counts the hits of an unlimited rule, which never reach the store. */
function planDescriptor(
  descriptor: RequestDescriptor,
  limit: MatchedLimit | undefined,
  hits: number,
  domain: string,
  nowSeconds: number,
  env: PlanEnv,
): DescriptorPlan {
  if (limit === undefined) return NO_LIMIT;
  if (limit.rule.isUnlimited) {
    limit.stats.totalHits.add(hits);
    limit.stats.withinLimit.add(hits);
    return UNLIMITED;
  }
  // compile() gives every limited rule a unit.
  const unit = limit.rule.unit;
  if (unit === undefined) return NO_LIMIT;
  return new FixedWindowCheck(limit, unit, descriptor, hits, domain, nowSeconds, env);
}

/** Every descriptor's plan, in request order. */
export function planRequest(
  request: RateLimitRequest,
  snapshot: ConfigSnapshot,
  nowSeconds: number,
  env: PlanEnv,
): DescriptorPlan[] {
  const descriptors = request.descriptors;
  if (!snapshot.hasDomain(request.domain)) {
    env.stats.runtimeCounter(STAT.domainNotFound(request.domain)).add(descriptors.length);
  }
  const limits = matchLimits(request, snapshot);
  const requestHits = Math.max(1, request.hitsAddend);
  const plans = new Array<DescriptorPlan>(descriptors.length);
  for (let i = 0; i < descriptors.length; i++) {
    const descriptor = descriptors[i];
    plans[i] =
      descriptor === undefined
        ? NO_LIMIT
        : planDescriptor(
            descriptor,
            limits[i],
            descriptor.hitsAddend ?? requestHits,
            request.domain,
            nowSeconds,
            env,
          );
  }
  return plans;
}
