// The compiled descriptor tree and the matching rules of SPEC.md over it.
import { QuotaRuleSet } from '../quota/model';
import type { RuleStatsFactory } from '../stats';
import type {
  ConfigSnapshot,
  DescriptorQuery,
  MatchedLimit,
  PathStep,
  RateLimitRule,
  RuleListing,
} from './types';
import { entrySegment, segmenter, type Segmenter } from './stat-key';
import { matchesWildcard } from './wildcard';

/** One configured descriptor. */
export interface DescriptorNode {
  readonly key: string;
  /** The configured value, wildcards included; undefined for a key-only descriptor. */
  readonly value: string | undefined;
  readonly wildcardParts: readonly string[] | undefined;
  readonly rule: RateLimitRule | undefined;
  /** The match returned when no runtime value changes the statistics key. */
  readonly defaultMatch: MatchedLimit | undefined;
  readonly children: Level | undefined;
  readonly isValueToMetric: boolean;
  readonly isShareThreshold: boolean;
  /** The file or xDS resource that configured it. */
  readonly source: string;
}

/** The descriptors configured under one key at one level. */
export interface KeyEntry {
  readonly exact: Map<string, DescriptorNode>;
  readonly wildcards: DescriptorNode[];
  keyOnly: DescriptorNode | undefined;
}

/** The descriptors at one level, by key. */
export type Level = Map<string, KeyEntry>;

/** How an entry matched, which decides what its statistics key segment holds. */
const enum Via {
  Value,
  Wildcard,
  Key,
}

/** Options that shape statistics keys. */
export interface SnapshotOptions {
  readonly stats: RuleStatsFactory;
  /** SANITIZE_DESCRIPTOR_METRIC_DOTS: dots in keys and values become `_` in statistics keys. */
  readonly sanitizeDots: boolean;
}

/**
 * The path of the current match. Matching is synchronous, so one buffer serves every
 * request and matching allocates nothing in the common case.
 */
const SCRATCH_VIAS: Via[] = [];
const SCRATCH_NODES: DescriptorNode[] = [];

/**
 * A rule's lines on /rlconfig. A rule the reference could load gets the reference's exact line:
 * scripts parse it, so nothing is added to it. Other limits get a line each, with the reference's
 * fields first and their algorithm (and burst) after.
 */
function dumpLines(r: RateLimitRule): string[] {
  const line = (key: string, unit: string, rpu: number): string =>
    `${key}: unit=${unit} requests_per_unit=${rpu}, shadow_mode: ${r.isShadow}, quota_mode: ${r.isQuota}`;
  const only = r.limits[0];
  if (r.limits.length === 0 || (r.limits.length === 1 && only?.algorithm === 'fixed_window'))
    return [line(r.statKey, r.unit ?? 'UNKNOWN', r.requestsPerUnit)];
  return r.limits.map(
    (l) =>
      `${line(l.statKey, l.unit, l.requestsPerUnit)}, algorithm: ${l.algorithm}` +
      (l.algorithm === 'token_bucket' ? `, burst: ${l.burst}` : ''),
  );
}

export class CompiledSnapshot implements ConfigSnapshot {
  readonly domains: readonly string[];
  /** A key or value as it appears in a statistics key. */
  private readonly segment: Segmenter;

  constructor(
    private readonly tree: ReadonlyMap<string, Level>,
    private readonly options: SnapshotOptions,
    readonly quotaRules: QuotaRuleSet = QuotaRuleSet.EMPTY,
  ) {
    this.domains = Object.freeze([...tree.keys()].sort());
    this.segment = segmenter(options.sanitizeDots);
    Object.freeze(this);
  }

  hasDomain(domain: string): boolean {
    return this.tree.has(domain);
  }

  findLimit(domain: string, descriptor: DescriptorQuery): MatchedLimit | undefined {
    const level0 = this.tree.get(domain);
    if (level0 === undefined) return undefined;
    if (descriptor.limit !== undefined) return this.overrideLimit(domain, descriptor);

    const entries = descriptor.entries;
    const last = entries.length - 1;
    let level: Level | undefined = level0;
    // Runtime values only enter the statistics key through these flags; without them the
    // precomputed match is returned and nothing is allocated.
    let isDynamic = false;

    for (let i = 0; i <= last; i++) {
      const entry = entries[i];
      if (entry === undefined || level === undefined) return undefined;
      const keyEntry = level.get(entry.key);
      if (keyEntry === undefined) return undefined;
      let node = keyEntry.exact.get(entry.value);
      let via = Via.Value;
      if (node === undefined) {
        for (const candidate of keyEntry.wildcards) {
          if (
            candidate.wildcardParts !== undefined &&
            matchesWildcard(candidate.wildcardParts, entry.value)
          ) {
            node = candidate;
            via = Via.Wildcard;
            break;
          }
        }
      }
      if (node === undefined) {
        node = keyEntry.keyOnly;
        via = Via.Key;
        if (node === undefined) return undefined;
      }
      if (node.isValueToMetric || (via === Via.Wildcard && node.isShareThreshold)) isDynamic = true;
      SCRATCH_VIAS[i] = via;
      SCRATCH_NODES[i] = node;
      if (i === last) {
        const rule = node.rule;
        if (rule === undefined || node.defaultMatch === undefined) return undefined;
        if (!isDynamic && !rule.isDetailedMetric) return node.defaultMatch;
        return this.dynamicMatch(domain, descriptor, rule, node.defaultMatch);
      }
      level = node.children;
    }
    return undefined;
  }

  /** The match when runtime values shape the statistics key or the cache key. */
  private dynamicMatch(
    domain: string,
    descriptor: DescriptorQuery,
    rule: RateLimitRule,
    fallback: MatchedLimit,
  ): MatchedLimit {
    const entries = descriptor.entries;
    const vias = SCRATCH_VIAS;
    const nodes = SCRATCH_NODES;
    let sharedValues: (string | undefined)[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const node = nodes[i];
      if (vias[i] === Via.Wildcard && node?.isShareThreshold === true) {
        sharedValues ??= new Array<string | undefined>(entries.length).fill(undefined);
        sharedValues[i] = node.value;
      }
    }
    if (!this.options.stats.isEnabled)
      return sharedValues === undefined ? fallback : { ...fallback, sharedValues };

    let key = domain;
    if (rule.isDetailedMetric) {
      // detailed_metric puts every runtime value in the key; a shared value stays the pattern.
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i];
        if (entry === undefined) continue;
        const shared = sharedValues?.[i];
        key += `.${this.segment(entry.key)}`;
        if (shared !== undefined) key += `_${this.segment(shared)}`;
        else if (sharedValues === undefined || entry.value !== '')
          key += `_${this.segment(entry.value)}`;
      }
    } else {
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i];
        const node = nodes[i];
        if (entry === undefined || node === undefined) continue;
        const via = vias[i];
        let value: string | undefined;
        if (via === Via.Wildcard)
          value = sharedValues?.[i] ?? (node.isValueToMetric ? entry.value : node.value);
        else if (via === Via.Value) value = entry.value;
        else value = node.isValueToMetric ? entry.value : undefined;
        key += `.${entrySegment(this.segment, entry.key, value)}`;
      }
      if (key === rule.statKey)
        return sharedValues === undefined ? fallback : { ...fallback, sharedValues };
    }
    return this.runtimeMatch(key, fallback, sharedValues);
  }

  /** The match whose statistics go under the runtime key `key` (and its limits' below it). */
  private runtimeMatch(
    key: string,
    fallback: MatchedLimit,
    sharedValues: (string | undefined)[] | undefined,
  ): MatchedLimit {
    const { rule } = fallback;
    const factory = this.options.stats;
    const stats = factory.forRuntimeRule(key, fallback.stats);
    // An item of rate_limits keeps its unit after the runtime key, as after the rule's.
    const limitStats = rule.limits.map((limit, i) =>
      limit.statKey === rule.statKey
        ? stats
        : factory.forRuntimeRule(
            key + limit.statKey.slice(rule.statKey.length),
            fallback.limitStats[i],
          ),
    );
    return { rule, stats, sharedValues, limitStats };
  }

  /** A caller-supplied limit: its own rule, with statistics under the descriptor's key. */
  private overrideLimit(domain: string, descriptor: DescriptorQuery): MatchedLimit | undefined {
    const limit = descriptor.limit;
    if (limit === undefined) return undefined;
    let key = domain;
    for (const entry of descriptor.entries)
      key += `.${entrySegment(this.segment, entry.key, entry.value)}`;
    const rule: RateLimitRule = {
      statKey: key,
      requestsPerUnit: limit.requestsPerUnit,
      unit: limit.unit,
      isUnlimited: false,
      isShadow: false,
      isQuota: false,
      isDetailedMetric: false,
      name: undefined,
      replaces: [],
      metadata: undefined,
      // The caller's limit replaces the configured ones and counts as the reference counts it.
      limits: [
        {
          requestsPerUnit: limit.requestsPerUnit,
          unit: limit.unit,
          algorithm: 'fixed_window',
          burst: limit.requestsPerUnit,
          name: undefined,
          keySuffix: '',
          statKey: key,
        },
      ],
    };
    const stats = this.options.stats.forRuntimeRule(key, undefined);
    return { rule, stats, sharedValues: undefined, limitStats: [stats] };
  }

  dump(): string {
    return this.rules()
      .flatMap(({ rule }) => dumpLines(rule))
      .map((line) => `${line}\n`)
      .join('');
  }

  rules(): readonly RuleListing[] {
    const out: RuleListing[] = [];
    const walk = (domain: string, level: Level, above: readonly PathStep[]): void => {
      for (const keyEntry of level.values()) {
        const nodes = [
          ...keyEntry.exact.values(),
          ...keyEntry.wildcards,
          ...(keyEntry.keyOnly === undefined ? [] : [keyEntry.keyOnly]),
        ];
        for (const node of nodes) {
          const path = [...above, { key: node.key, value: node.value }];
          if (node.rule !== undefined) {
            out.push({
              domain,
              path,
              rule: node.rule,
              source: node.source,
              isValueToMetric: node.isValueToMetric,
              isShareThreshold: node.isShareThreshold,
            });
          }
          if (node.children !== undefined) walk(domain, node.children, path);
        }
      }
    };
    for (const domain of this.domains) {
      const level = this.tree.get(domain);
      if (level !== undefined) walk(domain, level, []);
    }
    return out;
  }
}
