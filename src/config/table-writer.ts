// Collects the nodes of a configuration being checked into the columns of CompiledTables.
import type { QuotaRule } from '../quota/model';
import { NODE, unitCode, type CompiledTables, type RuleExtras } from './tables';
import type { RateLimitRule } from './types';

/** One descriptor as the checker hands it over. */
export interface NodeInput {
  readonly level: number;
  readonly key: string;
  readonly value: string | undefined;
  readonly isValueToMetric: boolean;
  readonly isShareThreshold: boolean;
  readonly source: string;
}

/** The extras of a rule, or undefined when the columns say everything about it. */
function extrasOf(rule: RateLimitRule): RuleExtras | undefined {
  const only = rule.limits[0];
  const isPlainLimit =
    rule.limits.length === 1 &&
    only !== undefined &&
    only.keySuffix === '' &&
    only.algorithm === 'fixed_window' &&
    only.name === undefined &&
    only.burst === only.requestsPerUnit;
  const isPlain = rule.isUnlimited ? rule.limits.length === 0 : isPlainLimit;
  if (
    isPlain &&
    rule.name === undefined &&
    rule.replaces.length === 0 &&
    rule.metadata === undefined
  )
    return undefined;
  return {
    name: rule.name,
    replaces: rule.replaces,
    metadata: rule.metadata,
    limits: rule.limits,
  };
}

/** Indexes of strings seen before, so that each key and source is written once. */
class Interned {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  of(text: string): number {
    let i = this.index.get(text);
    if (i === undefined) {
      i = this.list.length;
      this.list.push(text);
      this.index.set(text, i);
    }
    return i;
  }
}

export class TableWriter {
  private readonly domains: string[] = [];
  private readonly domainLevels: number[] = [];
  private levelCount = 0;
  private readonly keys = new Interned();
  private readonly sources = new Interned();
  private readonly level: number[] = [];
  private readonly key: number[] = [];
  private readonly children: number[] = [];
  private readonly flags: number[] = [];
  private readonly requestsPerUnit: number[] = [];
  private readonly unit: number[] = [];
  private readonly source: number[] = [];
  private readonly values: (string | null)[] = [];
  private readonly statKeys: (string | null)[] = [];
  private readonly extras: [number, RuleExtras][] = [];

  /** A new, empty level; its id. */
  newLevel(): number {
    this.levelCount += 1;
    return this.levelCount - 1;
  }

  /** The top level of a new domain; its id. */
  newDomain(domain: string): number {
    const level = this.newLevel();
    this.domains.push(domain);
    this.domainLevels.push(level);
    return level;
  }

  /** Adds a node without a rule; its id, in the order nodes are added. */
  addNode(node: NodeInput): number {
    const id = this.values.length;
    this.level.push(node.level);
    this.key.push(this.keys.of(node.key));
    this.children.push(-1);
    this.flags.push(
      (node.isValueToMetric ? NODE.VALUE_TO_METRIC : 0) |
        (node.isShareThreshold ? NODE.SHARE_THRESHOLD : 0),
    );
    this.requestsPerUnit.push(0);
    this.unit.push(0);
    this.source.push(this.sources.of(node.source));
    this.values.push(node.value ?? null);
    this.statKeys.push(null);
    return id;
  }

  setRule(id: number, rule: RateLimitRule): void {
    this.flags[id] =
      (this.flags[id] ?? 0) |
      NODE.HAS_RULE |
      (rule.isUnlimited ? NODE.UNLIMITED : 0) |
      (rule.isShadow ? NODE.SHADOW : 0) |
      (rule.isQuota ? NODE.QUOTA : 0) |
      (rule.isDetailedMetric ? NODE.DETAILED_METRIC : 0);
    this.requestsPerUnit[id] = rule.requestsPerUnit;
    this.unit[id] = unitCode(rule.unit);
    this.statKeys[id] = rule.statKey;
    const extras = extrasOf(rule);
    if (extras !== undefined) this.extras.push([id, extras]);
  }

  setChildren(id: number, level: number): void {
    this.children[id] = level;
  }

  /** The tables, with the checked quota rules of every document beside the nodes. */
  finish(quotaRules: readonly QuotaRule[] = []): CompiledTables {
    return {
      header: {
        quotaRules,
        nodeCount: this.values.length,
        levelCount: this.levelCount,
        domains: this.domains,
        domainLevels: this.domainLevels,
        keys: this.keys.list,
        sources: this.sources.list,
        columns: {
          level: Int32Array.from(this.level),
          key: Int32Array.from(this.key),
          children: Int32Array.from(this.children),
          flags: Uint8Array.from(this.flags),
          requestsPerUnit: Uint32Array.from(this.requestsPerUnit),
          unit: Uint8Array.from(this.unit),
          source: Int32Array.from(this.source),
        },
      },
      strings: { from: 0, values: this.values, statKeys: this.statKeys, extras: this.extras },
    };
  }
}
