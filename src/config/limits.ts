// The limits of one rule: its rate_limit block and its rate_limits list, checked and compiled.
import type { RateLimitPolicyDoc } from './document';
import type { ConfigErrorCode, SourcePosition } from './errors';
import { ALGORITHMS, type Algorithm, type RuleLimit } from './types';
import { ACCEPTED_UNITS, parseUnit, UNIT_SECONDS, type Unit } from './units';

/** What the counter backend in use cannot run, and why; compile() refuses rules that need it. */
export interface BackendCapabilities {
  /** The backend's name as BACKEND_TYPE spells it, for the refusal. */
  readonly name: string;
  readonly unsupported: Readonly<Partial<Record<Algorithm, string>>>;
}

/** One refusal of a limit, pointing at the block or item it is in. */
export interface LimitProblem {
  readonly code: ConfigErrorCode;
  readonly reason: string;
  readonly position: SourcePosition | undefined;
  /** The block's path below its descriptor: `rate_limit` or `rate_limits[1]`. */
  readonly at: string;
}

/** Where a limit is written below its descriptor. */
const RATE_LIMIT = 'rate_limit';
const listedAt = (index: number): string => `rate_limits[${index}]`;

const BY_NAME = new Map<string, Algorithm>(ALGORITHMS.map((a) => [a, a]));

function problem(
  code: ConfigErrorCode,
  reason: string,
  policy: RateLimitPolicyDoc,
  at: string = RATE_LIMIT,
): LimitProblem {
  return { code, reason, position: policy.position, at };
}

/** The algorithm named, refused when unknown or when the backend cannot run it. */
function algorithmOf(
  policy: RateLimitPolicyDoc,
  statKey: string,
  backend: BackendCapabilities | undefined,
  at: string,
): Algorithm | LimitProblem {
  const written = policy.algorithm ?? 'fixed_window';
  const algorithm = BY_NAME.get(written.toLowerCase());
  if (algorithm === undefined) {
    return problem(
      'INVALID_ALGORITHM',
      `invalid rate limit algorithm '${written}'; accepted: ${ALGORITHMS.join(', ')}`,
      policy,
      at,
    );
  }
  const why = backend?.unsupported[algorithm];
  if (why !== undefined && backend !== undefined) {
    return problem(
      'ALGORITHM_UNSUPPORTED',
      `rule '${statKey}' uses ${algorithm}, which the ${backend.name} backend cannot run: ${why}`,
      policy,
      at,
    );
  }
  return algorithm;
}

/** The token bucket's size, or the problem with `burst` for this algorithm. */
function burstOf(
  policy: RateLimitPolicyDoc,
  unit: Unit,
  algorithm: Algorithm,
  at: string,
): number | LimitProblem {
  if (algorithm !== 'token_bucket') {
    return policy.burst === undefined
      ? policy.requestsPerUnit
      : problem('BAD_LIMIT', `burst only applies to algorithm token_bucket`, policy, at);
  }
  if (policy.requestsPerUnit === 0) {
    return problem(
      'BAD_LIMIT',
      'token_bucket needs requests_per_unit of at least 1 (fixed_window with 0 refuses every request)',
      policy,
      at,
    );
  }
  if (policy.burst === 0) return problem('BAD_LIMIT', 'burst must be at least 1', policy, at);
  if (UNIT_SECONDS[unit] * 1e6 < policy.requestsPerUnit) {
    return problem(
      'BAD_LIMIT',
      `token_bucket counts time in microseconds: at most ${UNIT_SECONDS[unit] * 1e6} requests per ${unit.toLowerCase()}`,
      policy,
      at,
    );
  }
  return policy.burst ?? policy.requestsPerUnit;
}

/** One limit; `isListed` for an item of rate_limits, whose key and statistics carry its unit. */
function compileLimit(
  policy: RateLimitPolicyDoc,
  isListed: boolean,
  ruleKey: string,
  backend: BackendCapabilities | undefined,
  at: string,
): RuleLimit | LimitProblem {
  const unit = policy.unit === undefined ? undefined : parseUnit(policy.unit);
  if (unit === undefined)
    return problem(
      'INVALID_UNIT',
      `invalid rate limit unit '${policy.unit ?? ''}'; accepted: ${ACCEPTED_UNITS}`,
      policy,
      at,
    );
  const algorithm = algorithmOf(policy, ruleKey, backend, at);
  if (typeof algorithm !== 'string') return algorithm;
  const burst = burstOf(policy, unit, algorithm, at);
  if (typeof burst !== 'number') return burst;
  const unitName = unit.toLowerCase();
  return {
    requestsPerUnit: policy.requestsPerUnit,
    unit,
    algorithm,
    burst,
    name: policy.name,
    keySuffix: isListed ? `_${unitName}` : '',
    statKey: isListed ? `${ruleKey}.${unitName}` : ruleKey,
  };
}

/**
 * The limits of a limited rule: `policy` (when given and not unlimited) first, then `listed`.
 * Two limits of one unit are refused: they would count the same window twice.
 */
export function compileLimits(
  policy: RateLimitPolicyDoc | undefined,
  listed: readonly RateLimitPolicyDoc[],
  ruleKey: string,
  backend: BackendCapabilities | undefined,
): RuleLimit[] | LimitProblem {
  const limits: RuleLimit[] = [];
  const docs = policy === undefined ? listed : [policy, ...listed];
  for (const [i, doc] of docs.entries()) {
    const isListed = policy === undefined || i > 0;
    const at = isListed ? listedAt(policy === undefined ? i : i - 1) : RATE_LIMIT;
    const limit = compileLimit(doc, isListed, ruleKey, backend, at);
    if (!('unit' in limit)) return limit;
    if (limits.some((l) => l.unit === limit.unit)) {
      return problem(
        'DUPLICATE_LIMIT_UNIT',
        `descriptor '${ruleKey}' has two limits of unit ${limit.unit.toLowerCase()}; each limit needs its own unit`,
        doc,
        at,
      );
    }
    limits.push(limit);
  }
  return limits;
}

/** The problem of an unlimited `rate_limit` that also asks for something only limits have. */
export function unlimitedProblem(
  policy: RateLimitPolicyDoc,
  listed: readonly RateLimitPolicyDoc[],
): LimitProblem | undefined {
  if (listed.length > 0)
    return problem(
      'UNLIMITED_WITH_LIMITS',
      'an unlimited rule cannot also have rate_limits',
      policy,
    );
  // The default algorithm is no choice: xDS writes the enum's default on every rule.
  const isDefaultAlgorithm =
    policy.algorithm === undefined || policy.algorithm.toLowerCase() === 'fixed_window';
  if (!isDefaultAlgorithm || policy.burst !== undefined)
    return problem('BAD_LIMIT', 'an unlimited rule takes no algorithm or burst', policy);
  return undefined;
}
