// The rule of one descriptor, checked: its limits, its replaces, or the problem that refuses it.
import type { DescriptorDoc, RateLimitPolicyDoc } from './document';
import type { ConfigErrorCode } from './errors';
import {
  compileLimits,
  unlimitedProblem,
  type BackendCapabilities,
  type LimitProblem,
} from './limits';
import type { RateLimitRule, RuleLimit } from './types';
import { parseUnit } from './units';

/** `unlimited: true` with a valid unit: refused before anything else, as the reference does. */
function unlimitedUnitProblem(
  policy: RateLimitPolicyDoc,
  d: DescriptorDoc,
): LimitProblem | undefined {
  if (!policy.unlimited || policy.unit === undefined || parseUnit(policy.unit) === undefined)
    return undefined;
  return {
    code: 'UNLIMITED_WITH_UNIT',
    reason: 'should not specify rate limit unit when unlimited',
    position: policy.position ?? d.position,
    at: 'rate_limit',
  };
}

/** The problem of the block's replaces list, or of an unlimited block's other keys. */
function replacesProblem(policy: RateLimitPolicyDoc, d: DescriptorDoc): LimitProblem | undefined {
  const say = (code: ConfigErrorCode, reason: string): LimitProblem => ({
    code,
    reason,
    position: policy.position ?? d.position,
    at: 'rate_limit',
  });
  for (const replaced of policy.replaces) {
    if (replaced === '') return say('EMPTY_REPLACES', 'should not have an empty replaces entry');
    if (replaced === policy.name)
      return say('SELF_REPLACES', 'replaces should not contain name of same descriptor');
  }
  return policy.unlimited ? unlimitedProblem(policy, d.rateLimits) : undefined;
}

/** The limits of a limited rule, or the problem that refuses them. */
function limitsOf(
  d: DescriptorDoc,
  statKey: string,
  backend: BackendCapabilities | undefined,
): RuleLimit[] | LimitProblem {
  const policy = d.rateLimit;
  if (policy?.unlimited === true) return [];
  const limits = compileLimits(policy, d.rateLimits, statKey, backend);
  // A limit without its own position (xDS) is pointed at by its descriptor.
  if (!Array.isArray(limits)) return { ...limits, position: limits.position ?? d.position };
  return limits;
}

/**
 * The rule of descriptor `d` (undefined when it has none: a whitelisted descriptor), or the
 * problem that refuses it.
 */
export function checkRule(
  d: DescriptorDoc,
  statKey: string,
  backend: BackendCapabilities | undefined,
): RateLimitRule | LimitProblem | undefined {
  const policy = d.rateLimit;
  if (policy === undefined && d.rateLimits.length === 0) return undefined;
  const early = policy === undefined ? undefined : unlimitedUnitProblem(policy, d);
  const limits = early ?? limitsOf(d, statKey, backend);
  if (!Array.isArray(limits)) return limits;
  const problem = policy === undefined ? undefined : replacesProblem(policy, d);
  if (problem !== undefined) return problem;
  const first = limits[0];
  return {
    statKey,
    requestsPerUnit: first?.requestsPerUnit ?? policy?.requestsPerUnit ?? 0,
    unit: first?.unit,
    isUnlimited: policy?.unlimited === true,
    isShadow: d.shadowMode,
    isQuota: d.quotaMode,
    isDetailedMetric: d.detailedMetric,
    name: policy?.name,
    replaces: [...(policy?.replaces ?? [])],
    metadata: d.metadata === undefined ? undefined : structuredClone(d.metadata),
    limits,
  };
}

/** True when checkRule refused the rule. */
export function isProblem(rule: RateLimitRule | LimitProblem | undefined): rule is LimitProblem {
  return rule !== undefined && 'code' in rule;
}
