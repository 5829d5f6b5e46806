// An Envoy's share of a bucket as the strategy it enforces, and when a changed share is pushed.
import { MAX_UINT32 } from '../lib/uint32';
import type { AssignedStrategy } from './messages';
import { QUOTA_UNIT_SECONDS, type QuotaPolicy } from './rules';

/**
 * A new share is pushed when it differs from the one the Envoy holds by more than this part of
 * it (a whole-request share: by at least one request, and by more than 5%).
 */
export const PUSH_THRESHOLD = 0.05;

const DENY_ALL: AssignedStrategy = Object.freeze({ kind: 'blanket', rule: 'DENY_ALL' });
const ALLOW_ALL: AssignedStrategy = Object.freeze({ kind: 'blanket', rule: 'ALLOW_ALL' });

/** Below this many tokens a second, one token per fill at a longer interval keeps the rate exact. */
const ONE_TOKEN_FILLS_BELOW_PER_SECOND = 20;

function tokenBucket(
  policy: Extract<QuotaPolicy, { kind: 'budget' }>,
  rate: number,
): AssignedStrategy {
  const perSecond = rate / QUOTA_UNIT_SECONDS[policy.unit];
  if (!(perSecond > 1e-9)) return DENY_ALL;
  const part = policy.requestsPerUnit > 0 ? rate / policy.requestsPerUnit : 0;
  const maxTokens = Math.min(MAX_UINT32, Math.max(1, Math.floor(policy.maxTokens * part)));
  if (perSecond < ONE_TOKEN_FILLS_BELOW_PER_SECOND)
    return { kind: 'token_bucket', maxTokens, tokensPerFill: 1, fillIntervalMs: 1000 / perSecond };
  return {
    kind: 'token_bucket',
    maxTokens,
    tokensPerFill: Math.min(MAX_UINT32, Math.floor(perSecond)),
    fillIntervalMs: 1000,
  };
}

/**
 * The strategy of a share: a whole number of requests per unit (0 denies all), or a token
 * bucket filling at the share's rate holding the share's part of max_tokens (at least one).
 */
export function strategyOf(policy: QuotaPolicy, share: number): AssignedStrategy {
  if (policy.kind === 'blanket') return policy.rule === 'deny_all' ? DENY_ALL : ALLOW_ALL;
  if (policy.strategy === 'token_bucket') return tokenBucket(policy, share);
  if (share <= 0) return DENY_ALL;
  return { kind: 'requests_per_time_unit', requestsPerTimeUnit: share, unit: policy.unit };
}

/** Whether a share that moved from `sent` to `target` is worth a push. */
export function isBeyondThreshold(sent: number, target: number): boolean {
  const change = Math.abs(target - sent);
  return change > PUSH_THRESHOLD * sent || (sent === 0 && change > 0);
}
