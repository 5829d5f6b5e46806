// Checks parsed documents into CompiledTables, collecting every refusal, and compiles snapshots.
import { MAX_DESCRIPTOR_DEPTH, type ConfigDocument, type DescriptorDoc } from './document';
import { ConfigError, type SourcePosition } from './errors';
import type { CheckOptions, CompileOptions } from './options';
import { checkQuotaRules } from './quota-buckets';
import { checkRule, isProblem } from './rule-check';
import { SnapshotBuilder } from './snapshot-builder';
import { entrySegment, segmenter, type Segmenter } from './stat-key';
import { TableWriter } from './table-writer';
import type { CompiledTables } from './tables';
import type { ConfigSnapshot } from './types';

export type CompileResult =
  | { readonly ok: true; readonly snapshot: ConfigSnapshot }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

export type CheckResult =
  | { readonly ok: true; readonly tables: CompiledTables }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

/** The values taken under one key at one level, to refuse a second descriptor of one. */
interface Taken {
  readonly values: Set<string>;
  hasKeyOnly: boolean;
}

/** Where in the tree a descriptor list is checked. */
interface Place {
  readonly doc: ConfigDocument;
  readonly level: number;
  /** The statistics key of the parent, with its trailing dot: `domain.` at the top. */
  readonly parentKey: string;
  /** Levels above this one: 0 at the top. */
  readonly depth: number;
  /** The YAML path of this list's parent with its trailing dot: '' at the top. */
  readonly pathPrefix: string;
}

/**
 * The position a refusal names: the document's own, with the path of the walk when the
 * document has none (an xDS resource has no lines, and the fast reader leaves paths out).
 */
function located(position: SourcePosition | undefined, path: string): SourcePosition {
  if (position === undefined) return { path };
  return position.path === undefined ? { ...position, path } : position;
}

class Checker {
  readonly errors: ConfigError[] = [];
  readonly writer = new TableWriter();
  private readonly segment: Segmenter;
  /** Per level, per key: what is taken. */
  private readonly taken: Map<string, Taken>[] = [];

  constructor(private readonly options: CheckOptions) {
    this.segment = segmenter(options.sanitizeDots);
  }

  private fail(
    doc: ConfigDocument,
    code: ConfigError['code'],
    reason: string,
    position: SourcePosition | undefined,
  ): void {
    this.errors.push(new ConfigError(code, doc.source, reason, position));
  }

  newLevel(domain?: string): number {
    const level = domain === undefined ? this.writer.newLevel() : this.writer.newDomain(domain);
    this.taken[level] = new Map();
    return level;
  }

  /** Takes the descriptor's place at its level; false when another descriptor has it. */
  private take(level: number, d: DescriptorDoc): boolean {
    const byKey = this.taken[level];
    if (byKey === undefined) return false;
    let taken = byKey.get(d.key);
    if (taken === undefined) {
      taken = { values: new Set(), hasKeyOnly: false };
      byKey.set(d.key, taken);
    }
    if (d.value === undefined) {
      if (taken.hasKeyOnly) return false;
      taken.hasKeyOnly = true;
      return true;
    }
    if (taken.values.has(d.value)) return false;
    taken.values.add(d.value);
    return true;
  }

  /** Refuses a descriptor that cannot take its place at this level; true when it did. */
  private refuses(at: Place, d: DescriptorDoc, statKey: string, path: string): boolean {
    if (!this.take(at.level, d)) {
      const reason = `duplicate descriptor composite key '${statKey}'`;
      this.fail(at.doc, 'DUPLICATE_DESCRIPTOR', reason, located(d.position, path));
      return true;
    }
    if (d.shareThreshold && (d.value === undefined || !d.value.includes('*'))) {
      this.fail(
        at.doc,
        'SHARE_THRESHOLD_WITHOUT_WILDCARD',
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${d.key}${d.value === undefined ? '' : `_${d.value}`}'`,
        located(d.position, path),
      );
      return true;
    }
    return false;
  }

  /** Writes one descriptor's node, its rule and its children. */
  private node(at: Place, d: DescriptorDoc, statKey: string, path: string): void {
    const doc = at.doc;
    const id = this.writer.addNode({
      level: at.level,
      key: d.key,
      value: d.value,
      isValueToMetric: d.valueToMetric,
      isShareThreshold: d.shareThreshold,
      source: doc.source,
    });
    const rule = checkRule(d, statKey, this.options.backend);
    if (isProblem(rule)) {
      this.fail(doc, rule.code, rule.reason, located(rule.position, `${path}.${rule.at}`));
    } else if (rule !== undefined) {
      this.writer.setRule(id, rule);
    }
    if (d.descriptors.length === 0) return;
    const children = this.newLevel();
    this.writer.setChildren(id, children);
    const below = { doc, level: children, depth: at.depth + 1 };
    this.load({ ...below, parentKey: `${statKey}.`, pathPrefix: `${path}.` }, d.descriptors);
  }

  /** Checks a list of descriptors into one level, recording every problem. */
  load(at: Place, descriptors: readonly DescriptorDoc[]): void {
    if (at.depth >= MAX_DESCRIPTOR_DEPTH && descriptors.length > 0) {
      // Files are refused as they are read; this catches xDS resources, and anything else.
      const reason = `descriptors nest deeper than ${MAX_DESCRIPTOR_DEPTH} levels`;
      this.fail(at.doc, 'TOO_DEEP', reason, descriptors[0]?.position);
      return;
    }
    for (const [i, d] of descriptors.entries()) {
      const path = `${at.pathPrefix}descriptors[${i}]`;
      if (d.key === '') {
        this.fail(at.doc, 'EMPTY_KEY', 'descriptor has empty key', located(d.position, path));
        continue;
      }
      const statKey = at.parentKey + entrySegment(this.segment, d.key, d.value);
      if (this.refuses(at, d, statKey, path)) continue;
      this.node(at, d, statKey, path);
    }
  }
}

/**
 * Checks documents into tables: every problem found across all documents, or the tables of
 * a configuration with none (a configuration with any problem is refused whole).
 */
export function check(documents: readonly ConfigDocument[], options: CheckOptions): CheckResult {
  const checker = new Checker(options);
  const domains = new Map<string, number>();
  for (const doc of documents) {
    if (doc.domain === '') {
      checker.errors.push(
        new ConfigError('EMPTY_DOMAIN', doc.source, 'config file cannot have empty domain'),
      );
      continue;
    }
    let level = domains.get(doc.domain);
    if (level !== undefined && !options.mergeDomainConfig) {
      const reason = `duplicate domain '${doc.domain}' in config file`;
      checker.errors.push(new ConfigError('DUPLICATE_DOMAIN', doc.source, reason));
      continue;
    }
    if (level === undefined) {
      level = checker.newLevel(doc.domain);
      domains.set(doc.domain, level);
    }
    const top = { doc, level, parentKey: `${doc.domain}.`, depth: 0, pathPrefix: '' };
    checker.load(top, doc.descriptors);
  }
  const quota = checkQuotaRules(documents, options.backend);
  checker.errors.push(...quota.errors);
  if (checker.errors.length > 0) return { ok: false, errors: Object.freeze([...checker.errors]) };
  return { ok: true, tables: checker.writer.finish(quota.rules) };
}

/** Builds the snapshot of checked tables in one go, declaring its rules' statistics. */
export function snapshotOfTables(tables: CompiledTables, options: CompileOptions): ConfigSnapshot {
  const builder = new SnapshotBuilder(tables.header, options);
  builder.add(tables.strings);
  return builder.finish();
}

/**
 * Compiles documents into a snapshot. Returns every problem found across all documents;
 * a configuration with any problem is refused whole.
 */
export function compile(
  documents: readonly ConfigDocument[],
  options: CompileOptions,
): CompileResult {
  const checked = check(documents, options);
  if (!checked.ok) return checked;
  return { ok: true, snapshot: snapshotOfTables(checked.tables, options) };
}
