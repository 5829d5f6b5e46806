// The JSON shapes the debug listener shares between /rules, /counters and /decisions/recent.
import type { ConfigOrigin, DescriptorEntry, RateLimitRule, RuleListing } from '../../config';
import { limitsOf, type LimitDescription } from '../../engine';

export interface LimitJson {
  readonly algorithm: string;
  readonly limit: number;
  readonly unit: string;
  readonly name: string | null;
  /** Token buckets only. */
  readonly burst?: number;
}

export function limitJson(limit: LimitDescription): LimitJson {
  return {
    algorithm: limit.algorithm,
    limit: limit.requestsPerUnit,
    unit: limit.unit,
    name: limit.name ?? null,
    ...(limit.burst === undefined ? {} : { burst: limit.burst }),
  };
}

/** A rule as a request sees it: its statistics key, limits and modes. */
export function ruleJson(rule: RateLimitRule) {
  return {
    statKey: rule.statKey,
    name: rule.name ?? null,
    unlimited: rule.isUnlimited,
    limits: limitsOf(rule).map(limitJson),
    shadowMode: rule.isShadow,
    quotaMode: rule.isQuota,
  };
}

/** `k1=v1,k2=v2`: the form /counters takes, so a row can be looked up as it is shown. */
export function descriptorText(
  entries: readonly { readonly key: string; readonly value: string | undefined }[],
): string {
  const escape = (text: string): string => text.replace(/[\\,=]/g, (c) => `\\${c}`);
  return entries
    .map((e) => (e.value === undefined ? escape(e.key) : `${escape(e.key)}=${escape(e.value)}`))
    .join(',');
}

export function entriesJson(entries: readonly DescriptorEntry[]) {
  return entries.map(({ key, value }) => ({ key, value }));
}

/** A loaded rule with its place in the tree, its flags and where it was configured. */
export function listingJson(listing: RuleListing, origin: ConfigOrigin | undefined) {
  const { rule } = listing;
  return {
    domain: listing.domain,
    path: listing.path.map(({ key, value }) => ({ key, value: value ?? null })),
    pathText: descriptorText(listing.path),
    statKey: rule.statKey,
    name: rule.name ?? null,
    unlimited: rule.isUnlimited,
    limits: limitsOf(rule).map(limitJson),
    flags: {
      shadowMode: rule.isShadow,
      quotaMode: rule.isQuota,
      detailedMetric: rule.isDetailedMetric,
      valueToMetric: listing.isValueToMetric,
      shareThreshold: listing.isShareThreshold,
    },
    replaces: rule.replaces,
    source: listing.source,
    ...(origin?.kind === 'xds' ? { version: origin.version } : {}),
  };
}
