// A checked configuration as plain data: typed columns and strings, able to cross to another thread.
import type { QuotaRule } from '../quota/model';
import type { JsonObject } from './document';
import type { RuleLimit } from './types';
import { UNITS, type Unit } from './units';

/** Bits of a node's flags column. */
export const NODE = Object.freeze({
  HAS_RULE: 1,
  UNLIMITED: 2,
  SHADOW: 4,
  QUOTA: 8,
  DETAILED_METRIC: 16,
  VALUE_TO_METRIC: 32,
  SHARE_THRESHOLD: 64,
});

/** What a rule has beyond the common case: one fixed-window rate_limit, no name, no replaces. */
export interface RuleExtras {
  readonly name: string | undefined;
  readonly replaces: readonly string[];
  readonly metadata: JsonObject | undefined;
  readonly limits: readonly RuleLimit[];
}

/** One number per descriptor node, indexed by node id (configuration order, parents first). */
export interface NodeColumns {
  /** The level the node sits in. */
  readonly level: Int32Array;
  /** The node's key, an index into `keys`. */
  readonly key: Int32Array;
  /** The level of its children; -1 without children. */
  readonly children: Int32Array;
  readonly flags: Uint8Array;
  /** The rule's requests_per_unit (the first limit's). */
  readonly requestsPerUnit: Uint32Array;
  /** The rule's unit (the first limit's) as 1 + its index in UNITS; 0 for none. */
  readonly unit: Uint8Array;
  /** The file or resource that configured it, an index into `sources`. */
  readonly source: Int32Array;
}

/** Everything but the per-node strings; small, sent first. */
export interface TablesHeader {
  readonly nodeCount: number;
  readonly levelCount: number;
  /** Domains in the order first configured, and the level of each. */
  readonly domains: readonly string[];
  readonly domainLevels: readonly number[];
  readonly keys: readonly string[];
  readonly sources: readonly string[];
  readonly columns: NodeColumns;
  /** The RLQS rules of every document's quota_buckets, checked, in load order (plain data). */
  readonly quotaRules: readonly QuotaRule[];
}

/**
 * The strings of the nodes from `from` on: their values (null for a key-only descriptor),
 * the statistics keys of those with a rule (null for none), and the extras of rules that
 * have them. Sent in parts, so that no one step of building a snapshot is long.
 */
export interface NodeStrings {
  readonly from: number;
  readonly values: readonly (string | null)[];
  readonly statKeys: readonly (string | null)[];
  readonly extras: readonly (readonly [number, RuleExtras])[];
}

/** A checked configuration: the header and the strings of every node. */
export interface CompiledTables {
  readonly header: TablesHeader;
  readonly strings: NodeStrings;
}

/** The unit column's code of a unit. */
export function unitCode(unit: Unit | undefined): number {
  return unit === undefined ? 0 : UNITS.indexOf(unit) + 1;
}

/** The unit of a unit column's code. */
export function unitOfCode(code: number): Unit | undefined {
  return code === 0 ? undefined : UNITS[code - 1];
}

/** The strings of `tables` cut into parts of at most `size` nodes, in order. */
export function stringParts(strings: NodeStrings, size: number): NodeStrings[] {
  const parts: NodeStrings[] = [];
  const count = strings.values.length;
  let e = 0;
  for (let from = 0; from < count; from += size) {
    const to = Math.min(count, from + size);
    const extras: (readonly [number, RuleExtras])[] = [];
    while (e < strings.extras.length && (strings.extras[e]?.[0] ?? Infinity) < strings.from + to) {
      const extra = strings.extras[e];
      if (extra !== undefined) extras.push(extra);
      e += 1;
    }
    parts.push({
      from: strings.from + from,
      values: strings.values.slice(from, to),
      statKeys: strings.statKeys.slice(from, to),
      extras,
    });
  }
  return parts;
}

/** The buffers of a header's columns, to transfer rather than copy. */
export function columnBuffers(header: TablesHeader): ArrayBuffer[] {
  const c = header.columns;
  return [c.level, c.key, c.children, c.flags, c.requestsPerUnit, c.unit, c.source].map(
    (column) => column.buffer as ArrayBuffer,
  );
}
