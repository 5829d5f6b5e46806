// Typed reads of one parsed YAML file's nodes, each returning its value or the refusal.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  type Document,
  type LineCounter,
  type Node as YamlNode,
  type Scalar,
} from 'yaml';
import { MAX_UINT32 } from '../lib/uint32';
import type { JsonObject, JsonValue } from '../lib/struct';
import { MAX_DESCRIPTOR_DEPTH } from './document';
import { ConfigError, type ConfigErrorCode, type SourcePosition } from './errors';

export type { YamlNode };

/** One key of a map and its value. */
export interface Entry {
  readonly key: string;
  readonly node: YamlNode | null;
  readonly position: SourcePosition | undefined;
}

/** The text of a scalar as written in the file. */
function scalarText(node: Scalar): string {
  if (typeof node.source === 'string') return node.source;
  const v = node.value;
  return typeof v === 'string' ||
    typeof v === 'number' ||
    typeof v === 'boolean' ||
    typeof v === 'bigint'
    ? String(v)
    : '';
}

/** A node as a refusal names it. */
function describe(node: YamlNode | null): string {
  if (node === null) return 'nothing';
  if (isMap(node)) return 'a map';
  if (isSeq(node)) return 'a list';
  if (isScalar(node)) return JSON.stringify(scalarText(node));
  return 'an unknown node';
}

/**
 * A key whose value is null (`descriptors:` or `~`) is read as absent, as the reference's YAML
 * library leaves such a field at its zero value: no descriptors, no limit, false, 0.
 */
function absentWhenNull(node: YamlNode | null): YamlNode | null {
  return isScalar(node) && node.value === null ? null : node;
}

/** A YAML 1.1 merge key (`<<`), which the reference's YAML library honours. */
function isMergeKey(node: YamlNode | null): boolean {
  return isScalar(node) && typeof node.value === 'symbol' && node.source === '<<';
}

/**
 * Nodes read per character of the file at most (plus a floor): aliases may reuse a block many
 * times, but an alias bomb (each anchor repeating the one before) expands exponentially.
 */
const NODES_PER_CHARACTER = 10;
const MIN_NODE_BUDGET = 10_000;

/**
 * Thrown when reading expands past the budget, deep inside the recursion, and caught by
 * parseConfigFile, which turns it into the file's refusal.
 */
export class ExpansionExceeded extends Error {
  constructor(readonly refusal: ConfigError) {
    super(refusal.message);
    this.name = 'ExpansionExceeded';
  }
}

/**
 * Reads the nodes of one file. Every read returns its value or the ConfigError that refuses
 * the file; warnings (accepted but probably wrong) are collected on the side. Aliases are
 * resolved here, so the nodes read are counted here: past the budget the file is refused.
 */
export class YamlReader {
  readonly warnings: string[] = [];
  private nodesLeft: number;
  private depth = 0;
  /** yaml's Alias.resolve searches the whole document each time; each alias is looked up once. */
  private readonly aliasTargets = new Map<unknown, YamlNode | null>();
  /** Each node's YAML path, made on the first position asked for (an error or a rule). */
  private paths: Map<YamlNode, string> | undefined;

  constructor(
    private readonly source: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
    /** The keys the format knows anywhere; any other key refuses the file. */
    private readonly validKeys: ReadonlySet<string>,
    textLength = 0,
  ) {
    this.nodesLeft = MIN_NODE_BUDGET + NODES_PER_CHARACTER * textLength;
  }

  /** Reads one level of nested descriptors; refuses the file past MAX_DESCRIPTOR_DEPTH. */
  nested<T>(node: YamlNode | null, read: () => T | ConfigError): T | ConfigError {
    if (this.depth >= MAX_DESCRIPTOR_DEPTH) {
      return this.refusal(
        'TOO_DEEP',
        `config error, descriptors nest deeper than ${MAX_DESCRIPTOR_DEPTH} levels`,
        node,
      );
    }
    this.depth += 1;
    try {
      return read();
    } finally {
      this.depth -= 1;
    }
  }

  /** Counts nodes read; throws ExpansionExceeded once the file's budget is spent. */
  private spend(nodes: number, at: YamlNode | null | undefined): void {
    this.nodesLeft -= nodes;
    if (this.nodesLeft >= 0) return;
    throw new ExpansionExceeded(
      this.refusal(
        'TOO_MUCH_EXPANSION',
        'config error, YAML aliases expand the file to more nodes than the loader reads (an alias bomb?)',
        at,
      ),
    );
  }

  /** The refusal of this file for `reason`, at `node` when given. */
  refusal(code: ConfigErrorCode, reason: string, node?: YamlNode | null): ConfigError {
    return new ConfigError(code, this.source, reason, this.position(node));
  }

  /**
   * The reference accepts a known key in the wrong place and ignores it; so do we, so that its
   * files load unchanged, but we say so, because it is nearly always a mistake.
   */
  misplaced(entry: Entry, where: string): void {
    const at =
      entry.position === undefined
        ? ''
        : ` (line ${entry.position.line}, column ${entry.position.column})`;
    this.warnings.push(
      `${this.source}: key '${entry.key}' has no meaning ${where} and is ignored${at}`,
    );
  }

  position(node: YamlNode | null | undefined): SourcePosition | undefined {
    const offset = node?.range?.[0];
    if (node === null || node === undefined || offset === undefined) return undefined;
    const pos = this.lines.linePos(offset);
    this.paths ??= this.indexPaths();
    const path = this.paths.get(node);
    return path === undefined || path === ''
      ? { line: pos.line, column: pos.col }
      : { line: pos.line, column: pos.col, path };
  }

  /** Walks the document once: every map key and value, and list item, with its path. */
  private indexPaths(): Map<YamlNode, string> {
    const paths = new Map<YamlNode, string>();
    const visit = (node: unknown, path: string): void => {
      if (node === null || node === undefined || isAlias(node)) return;
      const yamlNode = node as YamlNode;
      if (paths.has(yamlNode)) return;
      paths.set(yamlNode, path);
      if (isMap(yamlNode)) {
        for (const pair of yamlNode.items) {
          const key = isScalar(pair.key) ? scalarText(pair.key) : '?';
          const keyPath = path === '' ? key : `${path}.${key}`;
          if (isScalar(pair.key)) paths.set(pair.key, keyPath);
          visit(pair.value, keyPath);
        }
      } else if (isSeq(yamlNode)) {
        yamlNode.items.forEach((item, i) => {
          visit(item, `${path}[${i}]`);
        });
      }
    };
    visit(this.doc.contents, '');
    return paths;
  }

  /** The node itself, or the node an alias points at. */
  resolve(node: unknown): YamlNode | null {
    if (node === null || node === undefined) return null;
    this.spend(1, node as YamlNode);
    if (!isAlias(node)) return node as YamlNode;
    let target = this.aliasTargets.get(node);
    if (target === undefined) {
      target = node.resolve(this.doc) ?? null;
      this.aliasTargets.set(node, target);
    }
    return target;
  }

  /** The entries of a map, with keys checked against the accepted keys. */
  entries(node: YamlNode | null): Entry[] | ConfigError {
    if (node === null) return [];
    if (!isMap(node))
      return this.refusal('BAD_VALUE', `config error, expected a map, got ${describe(node)}`, node);
    const out: Entry[] = [];
    for (const pair of node.items) {
      const keyNode = this.resolve(pair.key);
      const valueNode = absentWhenNull(this.resolve(pair.value));
      if (isMergeKey(keyNode)) {
        const merged = this.mergedEntries(valueNode);
        if (merged instanceof ConfigError) return merged;
        // Keys written in the map itself win over merged ones.
        const ownKeys = new Set(node.items.map((p) => (isScalar(p.key) ? p.key.value : undefined)));
        out.push(...merged.filter((entry) => !ownKeys.has(entry.key)));
        continue;
      }
      const entry = this.entry(keyNode, valueNode);
      if (entry instanceof ConfigError) return entry;
      out.push(entry);
    }
    return out;
  }

  /** The entries a merge key brings in; of several maps, the later ones first, as merged. */
  private mergedEntries(valueNode: YamlNode | null): Entry[] | ConfigError {
    const sources = isSeq(valueNode) ? valueNode.items.map((i) => this.resolve(i)) : [valueNode];
    const out: Entry[] = [];
    for (const source of sources.reverse()) {
      const entries = this.entries(source);
      if (entries instanceof ConfigError) return entries;
      out.push(...entries);
    }
    return out;
  }

  private entry(keyNode: YamlNode | null, valueNode: YamlNode | null): Entry | ConfigError {
    if (!isScalar(keyNode) || typeof keyNode.value !== 'string') {
      const shown = isScalar(keyNode) ? String(keyNode.source ?? keyNode.value) : describe(keyNode);
      return this.refusal(
        'KEY_NOT_STRING',
        `config error, key is not of type string: ${shown}`,
        keyNode,
      );
    }
    const key = keyNode.value;
    if (!this.validKeys.has(key))
      return this.refusal('UNKNOWN_KEY', `config error, unknown key '${key}'`, keyNode);
    return { key, node: valueNode, position: this.position(keyNode) };
  }

  /** A list whose items must all be maps. */
  listOfMaps(entry: Entry): (YamlNode | null)[] | ConfigError {
    const node = entry.node;
    if (node === null) return [];
    if (!isSeq(node)) {
      return this.refusal(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a list, got ${describe(node)}`,
        node,
      );
    }
    const out: YamlNode[] = [];
    for (const item of node.items) {
      const resolved = this.resolve(item);
      if (!isMap(resolved)) {
        return this.refusal(
          'LIST_NOT_MAPS',
          `config error, yaml file contains list of type other than map: ${describe(resolved)}`,
          resolved,
        );
      }
      out.push(resolved);
    }
    return out;
  }

  /** A string field; numbers and booleans count as their source text, as the reference reads them. */
  string(entry: Entry): string | ConfigError {
    const node = entry.node;
    if (node === null) return '';
    if (!isScalar(node)) {
      return this.refusal(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a string, got ${describe(node)}`,
        node,
      );
    }
    if (typeof node.value === 'string') return node.value;
    if (node.value === null) return '';
    return scalarText(node);
  }

  bool(entry: Entry): boolean | ConfigError {
    const node = entry.node;
    if (node === null) return false;
    if (!isScalar(node) || typeof node.value !== 'boolean') {
      return this.refusal(
        'BAD_VALUE',
        `config error, '${entry.key}' must be true or false, got ${describe(node)}`,
        node,
      );
    }
    return node.value;
  }

  uint32(entry: Entry): number | ConfigError {
    const node = entry.node;
    if (node === null) return 0;
    const value = isScalar(node) ? node.value : undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_UINT32) {
      return this.refusal(
        'BAD_VALUE',
        `config error, '${entry.key}' must be a whole number from 0 to ${MAX_UINT32}, got ${describe(node)}`,
        node,
      );
    }
    return value;
  }

  /** Any node as JSON: metadata is free-form. */
  json(node: YamlNode | null): JsonValue {
    if (node === null) return null;
    if (isMap(node)) {
      const out: JsonObject = {};
      for (const pair of node.items) {
        const keyNode = this.resolve(pair.key);
        const key = isScalar(keyNode) ? String(keyNode.value) : '';
        out[key] = this.json(this.resolve(pair.value));
      }
      return out;
    }
    if (isSeq(node)) return node.items.map((i) => this.json(this.resolve(i)));
    if (isScalar(node)) {
      const v = node.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null)
        return v;
      if (typeof v === 'bigint') return Number(v);
      return scalarText(node);
    }
    return null;
  }
}
