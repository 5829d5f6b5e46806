// The compiled descriptor tree and the reference's matching rules over it.
import { QuotaRuleSet } from '../quota/model';
import type { RuleStatsFactory } from '../stats';
import { ruleOf, type KeyEntry, type Level, type NodeTable } from './node-table';
import { dumpLines, listRules } from './rule-listing';
import { entrySegment, segmenter, type Segmenter } from './stat-key';
import { NODE, type CompiledTables } from './tables';
import type {
  ConfigSnapshot,
  DescriptorQuery,
  MatchedLimit,
  RateLimitRule,
  RuleListing,
} from './types';

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
const SCRATCH_NODES: number[] = [];

export class CompiledSnapshot implements ConfigSnapshot {
  readonly domains: readonly string[];
  /** A key or value as it appears in a statistics key. */
  private readonly segment: Segmenter;
  private readonly flags: Uint8Array;
  private readonly children: Int32Array;
  /**
   * The match of each node with a rule, made when the node first matches: its rule and its
   * statistics handles (whose counters are made then too).
   */
  private readonly matches: (MatchedLimit | undefined)[];

  constructor(
    private readonly table: NodeTable,
    private readonly options: SnapshotOptions,
    readonly quotaRules: QuotaRuleSet = QuotaRuleSet.EMPTY,
  ) {
    this.domains = Object.freeze([...table.domains.keys()].sort());
    this.segment = segmenter(options.sanitizeDots);
    this.flags = table.header.columns.flags;
    this.children = table.header.columns.children;
    this.matches = new Array<MatchedLimit | undefined>(table.header.nodeCount);
    Object.freeze(this);
  }

  hasDomain(domain: string): boolean {
    return this.table.domains.has(domain);
  }

  findLimit(domain: string, descriptor: DescriptorQuery): MatchedLimit | undefined {
    const level0 = this.table.domains.get(domain);
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
      const keyEntry: KeyEntry | undefined = level.get(entry.key);
      if (keyEntry === undefined) return undefined;
      let node: number = keyEntry.exact.get(entry.value) ?? -1;
      let via = Via.Value;
      if (node < 0 && keyEntry.wildcards !== undefined) {
        node = keyEntry.wildcards.find(entry.value);
        via = Via.Wildcard;
      }
      if (node < 0) {
        node = keyEntry.keyOnly;
        via = Via.Key;
        if (node < 0) return undefined;
      }
      const flags = this.flags[node] ?? 0;
      if (
        (flags & NODE.VALUE_TO_METRIC) !== 0 ||
        (via === Via.Wildcard && (flags & NODE.SHARE_THRESHOLD) !== 0)
      )
        isDynamic = true;
      SCRATCH_VIAS[i] = via;
      SCRATCH_NODES[i] = node;
      if (i === last) {
        if ((flags & NODE.HAS_RULE) === 0) return undefined;
        const match = this.matches[node] ?? this.firstMatch(node);
        if (match === undefined) return undefined;
        if (!isDynamic && (flags & NODE.DETAILED_METRIC) === 0) return match;
        return this.dynamicMatch(domain, descriptor, match.rule, match);
      }
      const child: number = this.children[node] ?? -1;
      level = child < 0 ? undefined : this.table.levels[child];
    }
    return undefined;
  }

  /** The match of a node's rule when no runtime value shapes its statistics keys; kept. */
  private firstMatch(node: number): MatchedLimit | undefined {
    const rule = ruleOf(this.table, node);
    if (rule === undefined) return undefined;
    const factory = this.options.stats;
    const stats = factory.forRule(rule.statKey);
    const match: MatchedLimit = Object.freeze({
      rule,
      stats,
      sharedValues: undefined,
      limitStats: Object.freeze(
        rule.limits.map((l) => (l.statKey === rule.statKey ? stats : factory.forRule(l.statKey))),
      ),
    });
    this.matches[node] = match;
    return match;
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
    const values = this.table.values;
    let sharedValues: (string | undefined)[] | undefined;
    for (let i = 0; i < entries.length; i++) {
      const node = nodes[i] ?? -1;
      if (vias[i] === Via.Wildcard && ((this.flags[node] ?? 0) & NODE.SHARE_THRESHOLD) !== 0) {
        sharedValues ??= new Array<string | undefined>(entries.length).fill(undefined);
        sharedValues[i] = values[node];
      }
    }
    if (!this.options.stats.isEnabled)
      return sharedValues === undefined ? fallback : { ...fallback, sharedValues };

    const key = rule.isDetailedMetric
      ? this.detailedKey(domain, descriptor, sharedValues)
      : this.valueKey(domain, descriptor, sharedValues);
    if (!rule.isDetailedMetric && key === rule.statKey)
      return sharedValues === undefined ? fallback : { ...fallback, sharedValues };
    return this.runtimeMatch(key, fallback, sharedValues);
  }

  /** detailed_metric puts every runtime value in the key; a shared value stays the pattern. */
  private detailedKey(
    domain: string,
    descriptor: DescriptorQuery,
    sharedValues: (string | undefined)[] | undefined,
  ): string {
    let key = domain;
    for (let i = 0; i < descriptor.entries.length; i++) {
      const entry = descriptor.entries[i];
      if (entry === undefined) continue;
      const shared = sharedValues?.[i];
      key += `.${this.segment(entry.key)}`;
      if (shared !== undefined) key += `_${this.segment(shared)}`;
      else if (sharedValues === undefined || entry.value !== '')
        key += `_${this.segment(entry.value)}`;
    }
    return key;
  }

  /** The key with value_to_metric's runtime values and share_threshold's patterns. */
  private valueKey(
    domain: string,
    descriptor: DescriptorQuery,
    sharedValues: (string | undefined)[] | undefined,
  ): string {
    let key = domain;
    for (let i = 0; i < descriptor.entries.length; i++) {
      const entry = descriptor.entries[i];
      const node = SCRATCH_NODES[i] ?? -1;
      if (entry === undefined || node < 0) continue;
      const isValueToMetric = ((this.flags[node] ?? 0) & NODE.VALUE_TO_METRIC) !== 0;
      const via = SCRATCH_VIAS[i];
      let value: string | undefined;
      if (via === Via.Wildcard)
        value = sharedValues?.[i] ?? (isValueToMetric ? entry.value : this.table.values[node]);
      else if (via === Via.Value) value = entry.value;
      else value = isValueToMetric ? entry.value : undefined;
      key += `.${entrySegment(this.segment, entry.key, value)}`;
    }
    return key;
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

  /**
   * The checked tables this snapshot was built from, as plain data: another process builds the
   * same snapshot from them (WORKERS above 1 compile once and hand the tables to every worker).
   */
  tables(): CompiledTables {
    const t = this.table;
    return {
      header: t.header,
      strings: {
        from: 0,
        values: t.values.map((value) => value ?? null),
        statKeys: t.statKeys.map((key) => key ?? null),
        // Built part by part in node order, so the map's own order is ascending.
        extras: [...t.extras],
      },
    };
  }

  rules(): readonly RuleListing[] {
    // A rule already matched lists the same object; the others are made for the listing only.
    return listRules(this.table, this.domains, (node) => this.matches[node]?.rule);
  }
}

/** The tables of a snapshot compiled here; undefined for another kind (one a test made). */
export function snapshotTables(snapshot: ConfigSnapshot): CompiledTables | undefined {
  return snapshot instanceof CompiledSnapshot ? snapshot.tables() : undefined;
}
