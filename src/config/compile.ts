// Compiles parsed documents into an immutable ConfigSnapshot, collecting every refusal.
import type { RuleStatsFactory } from '../stats';
import type { ConfigDocument, DescriptorDoc } from './document';
import { ConfigError, type SourcePosition } from './errors';
import { CompiledSnapshot, type DescriptorNode, type KeyEntry, type Level } from './snapshot';
import type { ConfigSnapshot, MatchedLimit, RateLimitRule } from './types';
import { parseUnit } from './units';
import { wildcardParts } from './wildcard';

export interface CompileOptions {
  readonly stats: RuleStatsFactory;
  /** MERGE_DOMAIN_CONFIG: several documents may add to one domain. */
  readonly mergeDomainConfig: boolean;
  /** SANITIZE_DESCRIPTOR_METRIC_DOTS. */
  readonly sanitizeDots: boolean;
}

export type CompileResult =
  | { readonly ok: true; readonly snapshot: ConfigSnapshot }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as object)) deepFreeze(inner);
  }
  return value;
}

class Compiler {
  readonly errors: ConfigError[] = [];
  private readonly segment: (text: string) => string;

  constructor(private readonly options: CompileOptions) {
    this.segment = options.sanitizeDots ? (t) => t.replace(/\./g, '_') : (t) => t;
  }

  private fail(
    doc: ConfigDocument,
    code: ConfigError['code'],
    reason: string,
    d?: DescriptorDoc,
    position: SourcePosition | undefined = d?.position,
  ): void {
    this.errors.push(new ConfigError(code, doc.source, reason, position));
  }

  private rule(doc: ConfigDocument, d: DescriptorDoc, statKey: string): RateLimitRule | undefined {
    const policy = d.rateLimit;
    if (policy === undefined) return undefined;
    // Problems of the rate_limit block point at the block, not at the descriptor.
    const at = policy.position ?? d.position;
    const unit = policy.unit === undefined ? undefined : parseUnit(policy.unit);
    if (policy.unlimited) {
      if (unit !== undefined) {
        this.fail(
          doc,
          'UNLIMITED_WITH_UNIT',
          'should not specify rate limit unit when unlimited',
          d,
          at,
        );
        return undefined;
      }
    } else if (unit === undefined) {
      this.fail(doc, 'INVALID_UNIT', `invalid rate limit unit '${policy.unit ?? ''}'`, d, at);
      return undefined;
    }
    for (const replaced of policy.replaces) {
      if (replaced === '') {
        this.fail(doc, 'EMPTY_REPLACES', 'should not have an empty replaces entry', d, at);
        return undefined;
      }
      if (replaced === policy.name) {
        this.fail(
          doc,
          'SELF_REPLACES',
          'replaces should not contain name of same descriptor',
          d,
          at,
        );
        return undefined;
      }
    }
    return deepFreeze({
      statKey,
      requestsPerUnit: policy.requestsPerUnit,
      unit: policy.unlimited ? undefined : unit,
      isUnlimited: policy.unlimited,
      isShadow: d.shadowMode,
      isQuota: d.quotaMode,
      isDetailedMetric: d.detailedMetric,
      name: policy.name,
      replaces: [...policy.replaces],
      metadata: d.metadata === undefined ? undefined : structuredClone(d.metadata),
    });
  }

  load(
    doc: ConfigDocument,
    level: Level,
    parentKey: string,
    descriptors: readonly DescriptorDoc[],
  ): void {
    for (const d of descriptors) {
      if (d.key === '') {
        this.fail(doc, 'EMPTY_KEY', 'descriptor has empty key', d);
        continue;
      }
      const statKey =
        parentKey +
        this.segment(d.key) +
        (d.value === undefined ? '' : `_${this.segment(d.value)}`);
      let keyEntry: KeyEntry | undefined = level.get(d.key);
      if (keyEntry === undefined) {
        keyEntry = { exact: new Map(), wildcards: [], keyOnly: undefined };
        level.set(d.key, keyEntry);
      }
      const parts = d.value === undefined ? undefined : wildcardParts(d.value);
      const isDuplicate =
        d.value === undefined
          ? keyEntry.keyOnly !== undefined
          : parts === undefined
            ? keyEntry.exact.has(d.value)
            : keyEntry.wildcards.some((w) => w.value === d.value);
      if (isDuplicate) {
        this.fail(
          doc,
          'DUPLICATE_DESCRIPTOR',
          `duplicate descriptor composite key '${statKey}'`,
          d,
        );
        continue;
      }
      if (d.shareThreshold && parts === undefined) {
        this.fail(
          doc,
          'SHARE_THRESHOLD_WITHOUT_WILDCARD',
          `share_threshold can only be used with wildcard values (containing '*'), but found key '${d.key}${d.value === undefined ? '' : `_${d.value}`}'`,
          d,
        );
        continue;
      }
      const rule = this.rule(doc, d, statKey);
      let children: Level | undefined;
      if (d.descriptors.length > 0) {
        children = new Map();
        this.load(doc, children, `${statKey}.`, d.descriptors);
      }
      const defaultMatch: MatchedLimit | undefined =
        rule === undefined
          ? undefined
          : Object.freeze({
              rule,
              stats: this.options.stats.forRule(statKey),
              sharedValues: undefined,
            });
      const node: DescriptorNode = Object.freeze({
        key: d.key,
        value: d.value,
        wildcardParts: parts,
        rule,
        defaultMatch,
        children,
        isValueToMetric: d.valueToMetric,
        isShareThreshold: d.shareThreshold,
      });
      if (d.value === undefined) keyEntry.keyOnly = node;
      else if (parts === undefined) keyEntry.exact.set(d.value, node);
      else keyEntry.wildcards.push(node);
    }
  }
}

/**
 * Compiles documents into a snapshot. Returns every problem found across all documents;
 * a configuration with any problem is refused whole.
 */
export function compile(
  documents: readonly ConfigDocument[],
  options: CompileOptions,
): CompileResult {
  const compiler = new Compiler(options);
  const tree = new Map<string, Level>();
  for (const doc of documents) {
    if (doc.domain === '') {
      compiler.errors.push(
        new ConfigError('EMPTY_DOMAIN', doc.source, 'config file cannot have empty domain'),
      );
      continue;
    }
    let level = tree.get(doc.domain);
    if (level !== undefined && !options.mergeDomainConfig) {
      compiler.errors.push(
        new ConfigError(
          'DUPLICATE_DOMAIN',
          doc.source,
          `duplicate domain '${doc.domain}' in config file`,
        ),
      );
      continue;
    }
    if (level === undefined) {
      level = new Map();
      tree.set(doc.domain, level);
    }
    compiler.load(doc, level, `${doc.domain}.`, doc.descriptors);
  }
  if (compiler.errors.length > 0) return { ok: false, errors: Object.freeze([...compiler.errors]) };
  return { ok: true, snapshot: new CompiledSnapshot(tree, options) };
}
