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

/**
 * Envoy's filter takes a token bucket's rate as `tokens_per_fill / ToInt64Seconds(fill_interval)`
 * (global_client_impl.cc, createTokenBucketFromAction): a fill interval under a second is an
 * infinite rate, and a fraction of a second is lost. So the fill interval is a whole number of
 * seconds, and long enough that at least this many tokens fill in it: rounding the tokens down
 * to a whole number then costs at most 2% of the rate, and never adds to it.
 */
const MIN_TOKENS_PER_FILL = 50;

/** Whole tokens every whole number of seconds, at most `perSecond` and within 2% of it. */
function wholeSecondFill(perSecond: number): { tokensPerFill: number; fillSeconds: number } {
  const fillSeconds =
    perSecond >= MIN_TOKENS_PER_FILL ? 1 : Math.ceil(MIN_TOKENS_PER_FILL / perSecond);
  const tokensPerFill = Math.min(MAX_UINT32, Math.floor(perSecond * fillSeconds * (1 + 1e-12)));
  return { tokensPerFill, fillSeconds };
}

function tokenBucket(
  policy: Extract<QuotaPolicy, { kind: 'budget' }>,
  rate: number,
  previous: AssignedStrategy | undefined,
): AssignedStrategy {
  const perSecond = rate / QUOTA_UNIT_SECONDS[policy.unit];
  if (!(perSecond > 1e-9)) return DENY_ALL;
  const part = policy.requestsPerUnit > 0 ? rate / policy.requestsPerUnit : 0;
  const maxTokens = Math.min(MAX_UINT32, Math.max(1, Math.floor(policy.maxTokens * part)));
  let { tokensPerFill, fillSeconds } = wholeSecondFill(perSecond);
  // Envoy keeps the token bucket it has when max_tokens, tokens_per_fill and the fill interval's
  // nanos are the same (protoTokenBucketsEq ignores the seconds): a new rate that differs only
  // in whole seconds would never apply. Twice the tokens in twice the time is the same rate.
  if (
    previous?.kind === 'token_bucket' &&
    previous.maxTokens === maxTokens &&
    previous.tokensPerFill === tokensPerFill &&
    previous.fillIntervalMs !== fillSeconds * 1000
  ) {
    tokensPerFill *= 2;
    fillSeconds *= 2;
  }
  return { kind: 'token_bucket', maxTokens, tokensPerFill, fillIntervalMs: fillSeconds * 1000 };
}

/**
 * The strategy of a share: a token bucket filling at the share's rate in whole seconds and
 * holding the share's part of max_tokens (at least one), or a whole number of requests per unit
 * (0 denies all). `previous` is what the Envoy holds, so that a change reaches it.
 */
export function strategyOf(
  policy: QuotaPolicy,
  share: number,
  previous?: AssignedStrategy,
): AssignedStrategy {
  if (policy.kind === 'blanket') return policy.rule === 'deny_all' ? DENY_ALL : ALLOW_ALL;
  if (policy.strategy === 'token_bucket') return tokenBucket(policy, share, previous);
  if (share <= 0) return DENY_ALL;
  return { kind: 'requests_per_time_unit', requestsPerTimeUnit: share, unit: policy.unit };
}

/** Whether a share that moved from `sent` to `target` is worth a push. */
export function isBeyondThreshold(sent: number, target: number): boolean {
  const change = Math.abs(target - sent);
  return change > PUSH_THRESHOLD * sent || (sent === 0 && change > 0);
}
