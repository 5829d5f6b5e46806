// An Envoy's share of a bucket as the strategy it enforces, and when a changed share is pushed.
import { MAX_UINT32 } from '../lib/uint32';
import type { AssignedStrategy } from './messages';
import { QUOTA_UNIT_SECONDS, type QuotaPolicy } from './rules';

/**
 * A new share is pushed when it differs from the one the Envoy holds by more than this part of
 * it (and by more than nothing, from nothing).
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

/**
 * The longest fill interval sent, in seconds (about 31.7 years): its seconds are written again
 * in the interval's nanos (fillNanos), which a Duration holds below 10^9.
 */
export const MAX_FILL_SECONDS = 999_999_999;

/**
 * Envoy's token buckets fill at least one token a year (token_bucket_impl.cc, kMinFillRate):
 * a share below that would be enforced above itself.
 */
export const ENVOY_MIN_FILL_PER_SECOND = 1 / (365 * 24 * 60 * 60);

/**
 * Whole tokens every whole number of seconds, at most `perSecond` and within 2% of it (from 50
 * tokens in MAX_FILL_SECONDS, about 1.6 a year, up; a little more below).
 */
function wholeSecondFill(perSecond: number): { tokensPerFill: number; fillSeconds: number } {
  const fillSeconds =
    perSecond >= MIN_TOKENS_PER_FILL
      ? 1
      : Math.min(MAX_FILL_SECONDS, Math.ceil(MIN_TOKENS_PER_FILL / perSecond));
  const tokensPerFill = Math.min(MAX_UINT32, Math.floor(perSecond * fillSeconds * (1 + 1e-12)));
  return { tokensPerFill, fillSeconds };
}

/**
 * The token bucket of a rate, or DENY_ALL when Envoy could not hold the share to it.
 *
 * Envoy keeps the token bucket it holds when the new one has the same max_tokens,
 * tokens_per_fill and fill_interval.nanos (global_client_impl.cc, protoTokenBucketsEq: the
 * seconds are not compared). So the nanos carry the fill interval's seconds again: Envoy's rate
 * ignores them (ToInt64Seconds of seconds plus under a second of nanos is the seconds), and two
 * buckets its equality finds equal have the same seconds, so the same rate. Whatever this
 * process, or one before it, sent an Envoy, a change of rate is a bucket it replaces.
 */
function tokenBucket(
  policy: Extract<QuotaPolicy, { kind: 'budget' }>,
  share: number,
  maxTokens: number,
): AssignedStrategy {
  const perSecond = share / QUOTA_UNIT_SECONDS[policy.unit];
  if (!(perSecond >= ENVOY_MIN_FILL_PER_SECOND) || maxTokens < 1) return DENY_ALL;
  const { tokensPerFill, fillSeconds } = wholeSecondFill(perSecond);
  if (tokensPerFill < 1) return DENY_ALL;
  return {
    kind: 'token_bucket',
    maxTokens: Math.min(MAX_UINT32, maxTokens),
    tokensPerFill,
    fillSeconds,
    fillNanos: fillSeconds,
  };
}

/**
 * The strategy of a share (in the rule's unit): a blanket rule's, or a token bucket filling at
 * the share's rate in whole seconds and holding `maxTokens`, the Envoy's whole part of the
 * rule's max_tokens (Bucket.maxTokensOf). No whole token, or a share below Envoy's least fill
 * rate, denies all: Envoy would let through more than the share.
 */
export function strategyOf(
  policy: QuotaPolicy,
  share: number,
  maxTokens: number,
): AssignedStrategy {
  if (policy.kind === 'blanket') return policy.rule === 'deny_all' ? DENY_ALL : ALLOW_ALL;
  return tokenBucket(policy, share, maxTokens);
}

/** Whether a share that moved from `sent` to `target` is worth a push. */
export function isBeyondThreshold(sent: number, target: number): boolean {
  const change = Math.abs(target - sent);
  return change > PUSH_THRESHOLD * sent || (sent === 0 && change > 0);
}
