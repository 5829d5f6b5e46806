// The RLQS messages as the quota service sees them, decoded from and encoded to protobuf at the edge.
import type { BucketPairs } from './rules';

/** One bucket's usage since its last report on the stream. */
export interface BucketUsage {
  readonly bucket: BucketPairs;
  /** As the client counted it; 0 (Envoy's first report of a new bucket) measures nothing. */
  readonly timeElapsedMs: number;
  readonly allowed: number;
  readonly denied: number;
}

/** One RateLimitQuotaUsageReports message, checked. */
export interface UsageReports {
  /** Empty after the first message of a stream when the client leaves it out. */
  readonly domain: string;
  /** None is a keep-alive. */
  readonly usages: readonly BucketUsage[];
}

/** How an Envoy is to enforce its assignment (envoy.type.v3.RateLimitStrategy). */
export type AssignedStrategy =
  | { readonly kind: 'blanket'; readonly rule: 'ALLOW_ALL' | 'DENY_ALL' }
  | {
      readonly kind: 'token_bucket';
      readonly maxTokens: number;
      readonly tokensPerFill: number;
      /** fill_interval: whole seconds (Envoy's rate reads only them)... */
      readonly fillSeconds: number;
      /** ...and nanos, below 10^9, which Envoy's equality of token buckets compares. */
      readonly fillNanos: number;
    };

/** One BucketAction of a RateLimitQuotaResponse. */
export type BucketAction =
  | {
      readonly kind: 'assign';
      readonly bucket: BucketPairs;
      readonly strategy: AssignedStrategy;
      readonly ttlMs: number;
    }
  | { readonly kind: 'abandon'; readonly bucket: BucketPairs };

/** The gRPC statuses a quota stream may end with. */
export type QuotaStatus =
  'OK' | 'INVALID_ARGUMENT' | 'RESOURCE_EXHAUSTED' | 'UNAVAILABLE' | 'INTERNAL';

const part = (text: string): string => String(text.length) + ':' + text;

/**
 * A domain's bucket id as one string (`4:edge|4:name=3:api`): its pairs sorted by key, so the
 * order Envoy sent does not matter, and every part prefixed by its length, so that no two ids
 * give one string. Every usage of every report is looked up by it: JSON took four times as long.
 */
export function bucketKey(domain: string, bucket: BucketPairs): string {
  let key = part(domain);
  for (const name of bucket.size === 1 ? bucket.keys() : [...bucket.keys()].sort())
    key += '|' + part(name) + '=' + part(bucket.get(name) ?? '');
  return key;
}
