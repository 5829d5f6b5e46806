// The plan step: which limit applies to each descriptor of a request, and how it is counted.
import type { Algorithm, ConfigSnapshot, MatchedLimit, RuleLimit } from '../config';
import { MAX_UINT32 } from '../lib/uint32';
import { STAT, type RuleStats, type StatsStore } from '../stats';
import { FixedWindowCheck } from './fixed-window';
import type { CheckEnv, CheckInput, DescriptorPlan, LimitCheck, NotCounted } from './limit-check';
import { MultiLimitCheck } from './multi-limit';
import { SlidingWindowCheck } from './sliding-window';
import { TokenBucketCheck } from './token-bucket';
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

/** One line per algorithm: the check that counts a limit its way. */
const CHECKS: {
  readonly [A in Algorithm]: new (input: CheckInput, env: CheckEnv) => LimitCheck;
} = {
  fixed_window: FixedWindowCheck,
  sliding_window: SlidingWindowCheck,
  token_bucket: TokenBucketCheck,
};

/** The matches of a request and the names its rules replace. */
interface Matches {
  readonly limits: (MatchedLimit | undefined)[];
  readonly replaced: ReadonlySet<string> | undefined;
}

/**
 * The limit of each descriptor, undefined where none applies. A limited rule named in the
 * `replaces` of any rule the request matched applies to no descriptor; so does a limit of
 * rate_limits so named, the descriptor's other limits still applying.
 */
function matchLimits(request: RateLimitRequest, snapshot: ConfigSnapshot): Matches {
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
  if (replaced === undefined) return { limits, replaced };
  for (let i = 0; i < limits.length; i++) {
    const rule = limits[i]?.rule;
    if (rule?.name !== undefined && !rule.isUnlimited && replaced.has(rule.name))
      limits[i] = undefined;
  }
  return { limits, replaced };
}

/** The limits a descriptor is counted against: the rule's, less those replaced by name. */
function countedLimits(
  matched: MatchedLimit,
  replaced: ReadonlySet<string> | undefined,
): readonly RuleLimit[] {
  const limits = matched.rule.limits;
  if (replaced === undefined) return limits;
  return limits.filter((l) => l.name === undefined || !replaced.has(l.name));
}

/** What every descriptor of one request is planned with; made once per request. */
interface RequestScope {
  readonly domain: string;
  readonly nowMs: number;
  readonly replaced: ReadonlySet<string> | undefined;
  readonly env: PlanEnv;
}

/**
 * A check's input, spelled out field by field rather than spread from a partial one: an object
 * spread goes through V8's generic clone, which turns slow once several shapes pass through it.
 */
function checkInput(
  scope: RequestScope,
  descriptor: RequestDescriptor,
  hits: number,
  matched: MatchedLimit,
  limit: RuleLimit,
  stats: RuleStats,
): CheckInput {
  return { descriptor, hits, domain: scope.domain, nowMs: scope.nowMs, matched, limit, stats };
}

/** One descriptor's plan; counts the hits of an unlimited rule, which never reach the store. */
function planDescriptor(
  scope: RequestScope,
  descriptor: RequestDescriptor,
  hits: number,
  matched: MatchedLimit | undefined,
): DescriptorPlan {
  if (matched === undefined) return NO_LIMIT;
  if (matched.rule.isUnlimited) {
    matched.stats.totalHits.add(hits);
    matched.stats.withinLimit.add(hits);
    return UNLIMITED;
  }
  const { replaced, env } = scope;
  const all = matched.rule.limits;
  const only = all[0];
  if (all.length === 1 && only !== undefined && replaced === undefined) {
    // The common case, without the lists below.
    const input = checkInput(scope, descriptor, hits, matched, only, matched.stats);
    return new CHECKS[only.algorithm](input, env);
  }
  const limits = countedLimits(matched, replaced);
  const checks = limits.map((limit) => {
    const stats = matched.limitStats[matched.rule.limits.indexOf(limit)] ?? matched.stats;
    return new CHECKS[limit.algorithm](
      checkInput(scope, descriptor, hits, matched, limit, stats),
      env,
    );
  });
  if (checks.length === 1 && checks[0] !== undefined) return checks[0];
  return checks.length === 0 ? NO_LIMIT : new MultiLimitCheck(checks);
}

/** Every descriptor's plan, in request order. */
export function planRequest(
  request: RateLimitRequest,
  snapshot: ConfigSnapshot,
  nowMs: number,
  env: PlanEnv,
): DescriptorPlan[] {
  const descriptors = request.descriptors;
  if (!snapshot.hasDomain(request.domain)) {
    env.stats.runtimeCounter(STAT.domainNotFound(request.domain)).add(descriptors.length);
  }
  const { limits, replaced } = matchLimits(request, snapshot);
  const scope: RequestScope = { domain: request.domain, nowMs, replaced, env };
  const requestHits = Math.max(1, request.hitsAddend);
  const plans = new Array<DescriptorPlan>(descriptors.length);
  for (let i = 0; i < descriptors.length; i++) {
    const descriptor = descriptors[i];
    plans[i] =
      descriptor === undefined
        ? NO_LIMIT
        : planDescriptor(scope, descriptor, descriptor.hitsAddend ?? requestHits, limits[i]);
  }
  return plans;
}
