// The RLQS messages as the quota service sees them, decoded from and encoded to protobuf at the edge.
import type { BucketPairs, QuotaUnit } from './rules';

/** One bucket's usage since its last report on the stream. */
export interface BucketUsage {
  readonly bucket: BucketPairs;
  /** Above 0. */
  readonly timeElapsedMs: number;
  readonly allowed: number;
  readonly denied: number;
}

/** One RateLimitQuotaUsageReports message, checked. */
export interface UsageReports {
  /** Empty after the first message of a stream when the client leaves it out. */
  readonly domain: string;
  /** At least one. */
  readonly usages: readonly BucketUsage[];
}

/** How an Envoy is to enforce its assignment (envoy.type.v3.RateLimitStrategy). */
export type AssignedStrategy =
  | { readonly kind: 'blanket'; readonly rule: 'ALLOW_ALL' | 'DENY_ALL' }
  | {
      readonly kind: 'requests_per_time_unit';
      readonly requestsPerTimeUnit: number;
      readonly unit: QuotaUnit;
    }
  | {
      readonly kind: 'token_bucket';
      readonly maxTokens: number;
      readonly tokensPerFill: number;
      readonly fillIntervalMs: number;
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

/** A bucket id as one string: its pairs sorted by key, so the order Envoy sent does not matter. */
export function bucketKey(bucket: BucketPairs): string {
  return JSON.stringify([...bucket].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}
