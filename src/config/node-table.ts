// The built form of CompiledTables: levels of maps over node ids, and each rule made on demand.
import { deepFreeze } from '../lib/freeze';
import { NODE, unitOfCode, type RuleExtras, type TablesHeader } from './tables';
import type { RateLimitRule, RuleLimit } from './types';
import type { WildcardIndex } from './wildcard-index';

/** The descriptors configured under one key at one level, as node ids. */
export interface KeyEntry {
  readonly exact: Map<string, number>;
  wildcards: WildcardIndex | undefined;
  /** The key-only descriptor; -1 for none. */
  keyOnly: number;
}

/** The descriptors at one level, by key. */
export type Level = Map<string, KeyEntry>;

/** Everything a snapshot reads, built once by SnapshotBuilder. */
export interface NodeTable {
  readonly header: TablesHeader;
  /** The node's value; undefined for a key-only descriptor. */
  readonly values: (string | undefined)[];
  /** The statistics key of a node with a rule; undefined for none. */
  readonly statKeys: (string | undefined)[];
  readonly extras: Map<number, RuleExtras>;
  readonly levels: Level[];
  /** The top level of each domain. */
  readonly domains: Map<string, Level>;
}

/** The one limit of a rule without extras. */
function plainLimit(t: NodeTable, node: number, statKey: string): RuleLimit {
  const requestsPerUnit = t.header.columns.requestsPerUnit[node] ?? 0;
  const unit = unitOfCode(t.header.columns.unit[node] ?? 0) ?? 'SECOND';
  return {
    requestsPerUnit,
    unit,
    algorithm: 'fixed_window',
    burst: requestsPerUnit,
    name: undefined,
    keySuffix: '',
    statKey,
  };
}

/** The frozen rule of `node`, made from its columns (and extras); undefined without a rule. */
export function ruleOf(t: NodeTable, node: number): RateLimitRule | undefined {
  const flags = t.header.columns.flags[node] ?? 0;
  const statKey = t.statKeys[node];
  if ((flags & NODE.HAS_RULE) === 0 || statKey === undefined) return undefined;
  const isUnlimited = (flags & NODE.UNLIMITED) !== 0;
  const extras = t.extras.get(node);
  return deepFreeze({
    statKey,
    requestsPerUnit: t.header.columns.requestsPerUnit[node] ?? 0,
    unit: unitOfCode(t.header.columns.unit[node] ?? 0),
    isUnlimited,
    isShadow: (flags & NODE.SHADOW) !== 0,
    isQuota: (flags & NODE.QUOTA) !== 0,
    isDetailedMetric: (flags & NODE.DETAILED_METRIC) !== 0,
    name: extras?.name,
    replaces: extras === undefined ? [] : [...extras.replaces],
    metadata: extras?.metadata,
    limits:
      extras !== undefined
        ? extras.limits.map((l) => ({ ...l }))
        : isUnlimited
          ? []
          : [plainLimit(t, node, statKey)],
  });
}

/** Every statistics key of the rules of nodes `from` to `to`: a rule's own and its limits'. */
export function statKeysOf(t: NodeTable, from: number, to: number): string[] {
  const keys: string[] = [];
  for (let node = from; node < to; node++) {
    const statKey = t.statKeys[node];
    if (statKey === undefined) continue;
    keys.push(statKey);
    const extras = t.extras.get(node);
    if (extras === undefined) continue;
    for (const limit of extras.limits) if (limit.statKey !== statKey) keys.push(limit.statKey);
  }
  return keys;
}
