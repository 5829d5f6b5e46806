// The file format's shape after parsing and type checking, before compilation.
import type { SourcePosition } from './errors';

import type { JsonObject } from '../lib/struct';
import type { QuotaRule } from '../quota/model';

// JSON values live in lib, beside their Struct conversion; config keeps exporting them.
export type { JsonObject, JsonValue } from '../lib/struct';

export interface RateLimitPolicyDoc {
  readonly unit: string | undefined;
  readonly requestsPerUnit: number;
  readonly unlimited: boolean;
  readonly name: string | undefined;
  readonly replaces: readonly string[];
  /** As written; compile() checks it against ALGORITHMS. Undefined means fixed_window. */
  readonly algorithm: string | undefined;
  /** The token bucket's size; undefined means requests_per_unit. */
  readonly burst: number | undefined;
  readonly position: SourcePosition | undefined;
}

export interface DescriptorDoc {
  readonly key: string;
  readonly value: string | undefined;
  readonly rateLimit: RateLimitPolicyDoc | undefined;
  /** Further limits of the same descriptor (`rate_limits`), each with its own unit. */
  readonly rateLimits: readonly RateLimitPolicyDoc[];
  readonly descriptors: readonly DescriptorDoc[];
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly detailedMetric: boolean;
  readonly valueToMetric: boolean;
  readonly shareThreshold: boolean;
  readonly metadata: JsonObject | undefined;
  readonly position: SourcePosition | undefined;
}

/** One configuration file or one xDS resource. */
export interface ConfigDocument {
  /** File path or resource name, used in every error message. */
  readonly source: string;
  readonly domain: string;
  readonly descriptors: readonly DescriptorDoc[];
  /** Things accepted but probably wrong, such as a known key in a place where it means nothing. */
  readonly warnings: readonly string[];
  /** The RLQS rules of `quota_buckets` (docs/rlqs.md); absent: none. */
  readonly quotaBuckets?: readonly QuotaRule[];
}

/**
 * Descriptors nest at most this deep in a file or an xDS resource. A request descriptor of
 * MAX_ENTRIES_PER_DESCRIPTOR (64 by default) entries matches at most that many levels, so
 * deeper rules could match nothing; refusing them keeps every walk of the tree shallow.
 */
export const MAX_DESCRIPTOR_DEPTH = 64;

/** Every key of a descriptor file: the reference's, then this service's opt-in ones. */
export const DESCRIPTOR_FILE_KEYS: readonly string[] = Object.freeze([
  'domain',
  'key',
  'value',
  'descriptors',
  'rate_limit',
  'unit',
  'requests_per_unit',
  'unlimited',
  'shadow_mode',
  'quota_mode',
  'name',
  'replaces',
  'detailed_metric',
  'value_to_metric',
  'share_threshold',
  'metadata',
  // Beyond the reference (opt-in; its files never contain them).
  'rate_limits',
  'algorithm',
  'burst',
]);
