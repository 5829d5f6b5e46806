// The compiled configuration as the engine sees it: rules, matches and the snapshot seam.
import type { QuotaRuleSet } from '../quota/model';
import type { RuleStats } from '../stats';
import type { JsonObject } from './document';
import type { Unit } from './units';

/** One entry of a request descriptor. */
export interface DescriptorEntry {
  readonly key: string;
  readonly value: string;
}

/** A limit sent by the caller in the request, used instead of the configured one. */
export interface LimitOverride {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
}

/** What matching needs of a request descriptor. */
export interface DescriptorQuery {
  readonly entries: readonly DescriptorEntry[];
  readonly limit: LimitOverride | undefined;
}

/** How a limit counts: `fixed_window` is the reference's; the others are opt-in per limit. */
export const ALGORITHMS = ['fixed_window', 'sliding_window', 'token_bucket'] as const;
export type Algorithm = (typeof ALGORITHMS)[number];

/** One limit of a rule: its `rate_limit` block, or one item of its `rate_limits` list. */
export interface RuleLimit {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly algorithm: Algorithm;
  /** The token bucket's size in hits: `burst`, else requests_per_unit. */
  readonly burst: number;
  readonly name: string | undefined;
  /**
   * Appended to the cache key: '' for `rate_limit` (the reference's key), `_<unit>` for an item
   * of `rate_limits`, so two limits of one descriptor never share a counter.
   */
  readonly keySuffix: string;
  /** The statistics key: the rule's for `rate_limit`, `<rule key>.<unit>` for an item of `rate_limits`. */
  readonly statKey: string;
}

/** A configured rate_limit block (and rate_limits list), compiled. */
export interface RateLimitRule {
  /** The rule's statistics key, e.g. `domain.key1_value1.key2`. */
  readonly statKey: string;
  readonly requestsPerUnit: number;
  /** Undefined only for unlimited rules. */
  readonly unit: Unit | undefined;
  readonly isUnlimited: boolean;
  readonly isShadow: boolean;
  readonly isQuota: boolean;
  readonly isDetailedMetric: boolean;
  readonly name: string | undefined;
  readonly replaces: readonly string[];
  readonly metadata: JsonObject | undefined;
  /**
   * Every limit the descriptor is counted against: `rate_limit` first, then `rate_limits` in
   * file order. Empty for unlimited rules. `requestsPerUnit`, `unit` and `name` above are the
   * first limit's.
   */
  readonly limits: readonly RuleLimit[];
}

/** The limit that applies to one request descriptor. */
export interface MatchedLimit {
  readonly rule: RateLimitRule;
  /** The counters this request feeds; may differ from the rule's for detailed_metric and value_to_metric. */
  readonly stats: RuleStats;
  /**
   * Per entry index, the wildcard pattern that replaces the runtime value in the cache key
   * (share_threshold); undefined when no entry shares a threshold.
   */
  readonly sharedValues: readonly (string | undefined)[] | undefined;
  /** The counters of each of `rule.limits`, in order; the first limit's are `stats`. */
  readonly limitStats: readonly RuleStats[];
}

/** One level of a rule's descriptor path; `value` is undefined for a key-only descriptor. */
export interface PathStep {
  readonly key: string;
  readonly value: string | undefined;
}

/** A loaded rule with where it sits and where it came from, for operators. */
export interface RuleListing {
  readonly domain: string;
  /** From the domain's top level down to the rule's own descriptor. */
  readonly path: readonly PathStep[];
  readonly rule: RateLimitRule;
  /** The file path or xDS resource that configured it. */
  readonly source: string;
  readonly isValueToMetric: boolean;
  readonly isShareThreshold: boolean;
}

/** Where the current configuration came from, as its provider reports it. */
export type ConfigOrigin =
  | { readonly kind: 'files'; readonly directory: string }
  | { readonly kind: 'xds'; readonly server: string; readonly version: string };

/** An immutable compiled configuration. Built once per load; safe to share between requests. */
export interface ConfigSnapshot {
  /** The loaded domains, sorted. */
  readonly domains: readonly string[];
  /** True when `domain` is configured. */
  hasDomain(domain: string): boolean;
  /**
   * The limit for one request descriptor, or undefined when no rule applies (unknown domain,
   * no match, or a whitelisted descriptor).
   */
  findLimit(domain: string, descriptor: DescriptorQuery): MatchedLimit | undefined;
  /** Every rule, one per line, for the debug listener. */
  dump(): string;
  /** Every rule with its path and source, domains sorted, in configuration order within one. */
  rules(): readonly RuleListing[];
  /** The RLQS rules of every domain's quota_buckets. */
  readonly quotaRules: QuotaRuleSet;
}
