// Builds a ConfigSnapshot from checked tables, part by part, so that no one step takes long.
import type { CompileOptions } from './options';
import { quotaRuleSetOf } from './quota-buckets';
import { statKeysOf, type KeyEntry, type Level, type NodeTable } from './node-table';
import { CompiledSnapshot } from './snapshot';
import type { NodeStrings, TablesHeader } from './tables';
import type { ConfigSnapshot } from './types';
import { WildcardIndex } from './wildcard-index';

/** The key entry of `key` at `level`, made when missing. */
function keyEntryOf(level: Level, key: string): KeyEntry {
  let entry = level.get(key);
  if (entry === undefined) {
    entry = { exact: new Map(), wildcards: undefined, keyOnly: -1 };
    level.set(key, entry);
  }
  return entry;
}

/**
 * Takes the header, then the strings of the nodes in order (in one part or several), then
 * finishes. Each part places its nodes and declares its rules' statistics keys; the work of a
 * part is proportional to its size.
 */
export class SnapshotBuilder {
  private readonly table: NodeTable;
  private next = 0;

  constructor(
    header: TablesHeader,
    private readonly options: CompileOptions,
  ) {
    const levels: Level[] = [];
    for (let i = 0; i < header.levelCount; i++) levels.push(new Map());
    const domains = new Map<string, Level>();
    header.domains.forEach((domain, i) => {
      const level = levels[header.domainLevels[i] ?? -1];
      if (level !== undefined) domains.set(domain, level);
    });
    this.table = {
      header,
      values: new Array<string | undefined>(header.nodeCount),
      statKeys: new Array<string | undefined>(header.nodeCount),
      extras: new Map(),
      levels,
      domains,
    };
  }

  /** True once every node has been added. */
  get isComplete(): boolean {
    return this.next === this.table.header.nodeCount;
  }

  /** Adds the next nodes; parts come in order, without gaps. */
  add(part: NodeStrings): void {
    if (part.from !== this.next)
      throw new Error(`nodes from ${part.from} came before ${this.next}`);
    const t = this.table;
    const columns = t.header.columns;
    const to = part.from + part.values.length;
    for (const [node, extras] of part.extras) t.extras.set(node, extras);
    for (let node = part.from; node < to; node++) {
      const value = part.values[node - part.from] ?? undefined;
      t.values[node] = value;
      t.statKeys[node] = part.statKeys[node - part.from] ?? undefined;
      const level = t.levels[columns.level[node] ?? -1];
      const key = t.header.keys[columns.key[node] ?? -1];
      if (level === undefined || key === undefined) throw new Error(`node ${node} has no place`);
      const entry = keyEntryOf(level, key);
      if (value === undefined) entry.keyOnly = node;
      else if (!value.includes('*')) entry.exact.set(value, node);
      else (entry.wildcards ??= new WildcardIndex()).add(value, node);
    }
    this.next = to;
    this.options.stats.declareRules(statKeysOf(t, part.from, to));
  }

  /** The snapshot, once every node has been added. */
  finish(): ConfigSnapshot {
    if (!this.isComplete) throw new Error('the snapshot is missing nodes');
    const quotaRules = quotaRuleSetOf(this.table.header.quotaRules);
    return new CompiledSnapshot(this.table, this.options, quotaRules);
  }
}
