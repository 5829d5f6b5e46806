// Compiles parsed documents into an immutable ConfigSnapshot, collecting every refusal.
import { deepFreeze } from '../lib/freeze';
import type { RuleStatsFactory } from '../stats';
import {
  MAX_DESCRIPTOR_DEPTH,
  type ConfigDocument,
  type DescriptorDoc,
  type RateLimitPolicyDoc,
} from './document';
import { ConfigError, type ConfigErrorCode, type SourcePosition } from './errors';
import {
  compileLimits,
  unlimitedProblem,
  type BackendCapabilities,
  type LimitProblem,
} from './limits';
import { compileQuotaRules } from './quota-buckets';
import { CompiledSnapshot, type DescriptorNode, type KeyEntry, type Level } from './snapshot';
import { entrySegment, segmenter, type Segmenter } from './stat-key';
import type { ConfigSnapshot, MatchedLimit, RateLimitRule, RuleLimit } from './types';
import { parseUnit } from './units';
import { wildcardParts } from './wildcard';

export interface CompileOptions {
  readonly stats: RuleStatsFactory;
  /** MERGE_DOMAIN_CONFIG: several documents may add to one domain. */
  readonly mergeDomainConfig: boolean;
  /** SANITIZE_DESCRIPTOR_METRIC_DOTS. */
  readonly sanitizeDots: boolean;
  /** What the backend in use cannot run; rules needing it are refused. Unchecked when absent. */
  readonly backend?: BackendCapabilities;
}

export type CompileResult =
  | { readonly ok: true; readonly snapshot: ConfigSnapshot }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

/** Where in the tree a descriptor list is compiled. */
interface Place {
  readonly doc: ConfigDocument;
  readonly level: Level;
  /** The statistics key of the parent, with its trailing dot: `domain.` at the top. */
  readonly parentKey: string;
  /** Levels above this one: 0 at the top. */
  readonly depth: number;
}

/** The match of a rule when no runtime value shapes its statistics keys. */
function defaultMatchOf(rule: RateLimitRule, stats: RuleStatsFactory): MatchedLimit {
  const ruleStats = stats.forRule(rule.statKey);
  return Object.freeze({
    rule,
    stats: ruleStats,
    sharedValues: undefined,
    limitStats: Object.freeze(
      rule.limits.map((l) => (l.statKey === rule.statKey ? ruleStats : stats.forRule(l.statKey))),
    ),
  });
}

function keyEntryOf(level: Level, key: string): KeyEntry {
  let keyEntry = level.get(key);
  if (keyEntry === undefined) {
    keyEntry = { exact: new Map(), wildcards: [], keyOnly: undefined };
    level.set(key, keyEntry);
  }
  return keyEntry;
}

function isTaken(
  keyEntry: KeyEntry,
  d: DescriptorDoc,
  parts: readonly string[] | undefined,
): boolean {
  if (d.value === undefined) return keyEntry.keyOnly !== undefined;
  if (parts === undefined) return keyEntry.exact.has(d.value);
  return keyEntry.wildcards.some((w) => w.value === d.value);
}

function place(keyEntry: KeyEntry, node: DescriptorNode): void {
  if (node.value === undefined) keyEntry.keyOnly = node;
  else if (node.wildcardParts === undefined) keyEntry.exact.set(node.value, node);
  else keyEntry.wildcards.push(node);
}

class Compiler {
  readonly errors: ConfigError[] = [];
  private readonly segment: Segmenter;

  constructor(private readonly options: CompileOptions) {
    this.segment = segmenter(options.sanitizeDots);
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

  /** `unlimited: true` with a valid unit: refused before anything else, as the reference does. */
  private unlimitedUnitProblem(
    policy: RateLimitPolicyDoc,
    d: DescriptorDoc,
  ): LimitProblem | undefined {
    if (!policy.unlimited || policy.unit === undefined || parseUnit(policy.unit) === undefined)
      return undefined;
    return {
      code: 'UNLIMITED_WITH_UNIT',
      reason: 'should not specify rate limit unit when unlimited',
      position: policy.position ?? d.position,
    };
  }

  /** The problem of the block's replaces list, or of an unlimited block's other keys. */
  private replacesProblem(policy: RateLimitPolicyDoc, d: DescriptorDoc): LimitProblem | undefined {
    const say = (code: ConfigErrorCode, reason: string): LimitProblem => ({
      code,
      reason,
      position: policy.position ?? d.position,
    });
    for (const replaced of policy.replaces) {
      if (replaced === '') return say('EMPTY_REPLACES', 'should not have an empty replaces entry');
      if (replaced === policy.name)
        return say('SELF_REPLACES', 'replaces should not contain name of same descriptor');
    }
    return policy.unlimited ? unlimitedProblem(policy, d.rateLimits) : undefined;
  }

  /** The limits of a limited rule, or the problem that refuses them. */
  private limitsOf(d: DescriptorDoc, statKey: string): RuleLimit[] | LimitProblem {
    const policy = d.rateLimit;
    if (policy?.unlimited === true) return [];
    const limits = compileLimits(policy, d.rateLimits, statKey, this.options.backend);
    // A limit without its own position (xDS) is pointed at by its descriptor.
    if (!Array.isArray(limits)) return { ...limits, position: limits.position ?? d.position };
    return limits;
  }

  private rule(doc: ConfigDocument, d: DescriptorDoc, statKey: string): RateLimitRule | undefined {
    const policy = d.rateLimit;
    if (policy === undefined && d.rateLimits.length === 0) return undefined;
    const early = policy === undefined ? undefined : this.unlimitedUnitProblem(policy, d);
    const limits = early ?? this.limitsOf(d, statKey);
    const problem = Array.isArray(limits)
      ? policy === undefined
        ? undefined
        : this.replacesProblem(policy, d)
      : limits;
    if (problem !== undefined || !Array.isArray(limits)) {
      if (problem !== undefined) this.fail(doc, problem.code, problem.reason, d, problem.position);
      return undefined;
    }
    const first = limits[0];
    return deepFreeze({
      statKey,
      requestsPerUnit: first?.requestsPerUnit ?? policy?.requestsPerUnit ?? 0,
      unit: first?.unit,
      isUnlimited: policy?.unlimited === true,
      isShadow: d.shadowMode,
      isQuota: d.quotaMode,
      isDetailedMetric: d.detailedMetric,
      name: policy?.name,
      replaces: [...(policy?.replaces ?? [])],
      metadata: d.metadata === undefined ? undefined : structuredClone(d.metadata),
      limits,
    });
  }

  /** Refuses a descriptor that cannot take its place at this level; true when it did. */
  private refuses(
    at: Place,
    d: DescriptorDoc,
    parts: readonly string[] | undefined,
    statKey: string,
  ): boolean {
    if (isTaken(keyEntryOf(at.level, d.key), d, parts)) {
      this.fail(
        at.doc,
        'DUPLICATE_DESCRIPTOR',
        `duplicate descriptor composite key '${statKey}'`,
        d,
      );
      return true;
    }
    if (d.shareThreshold && parts === undefined) {
      this.fail(
        at.doc,
        'SHARE_THRESHOLD_WITHOUT_WILDCARD',
        `share_threshold can only be used with wildcard values (containing '*'), but found key '${d.key}${d.value === undefined ? '' : `_${d.value}`}'`,
        d,
      );
      return true;
    }
    return false;
  }

  /** The compiled node of one descriptor, its children compiled below it. */
  private node(
    at: Place,
    d: DescriptorDoc,
    parts: readonly string[] | undefined,
    statKey: string,
  ): DescriptorNode {
    const doc = at.doc;
    const rule = this.rule(doc, d, statKey);
    let children: Level | undefined;
    if (d.descriptors.length > 0) {
      children = new Map();
      this.load(
        { doc, level: children, parentKey: `${statKey}.`, depth: at.depth + 1 },
        d.descriptors,
      );
    }
    const defaultMatch: MatchedLimit | undefined =
      rule === undefined ? undefined : defaultMatchOf(rule, this.options.stats);
    return Object.freeze({
      key: d.key,
      value: d.value,
      wildcardParts: parts,
      rule,
      defaultMatch,
      children,
      isValueToMetric: d.valueToMetric,
      isShareThreshold: d.shareThreshold,
      source: doc.source,
    });
  }

  /** Compiles a list of descriptors into one level, recording every problem. */
  load(at: Place, descriptors: readonly DescriptorDoc[]): void {
    if (at.depth >= MAX_DESCRIPTOR_DEPTH && descriptors.length > 0) {
      // Files are refused as they are read; this catches xDS resources, and anything else.
      this.fail(
        at.doc,
        'TOO_DEEP',
        `descriptors nest deeper than ${MAX_DESCRIPTOR_DEPTH} levels`,
        descriptors[0],
      );
      return;
    }
    for (const d of descriptors) {
      if (d.key === '') {
        this.fail(at.doc, 'EMPTY_KEY', 'descriptor has empty key', d);
        continue;
      }
      const statKey = at.parentKey + entrySegment(this.segment, d.key, d.value);
      const parts = d.value === undefined ? undefined : wildcardParts(d.value);
      if (this.refuses(at, d, parts, statKey)) continue;
      place(keyEntryOf(at.level, d.key), this.node(at, d, parts, statKey));
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
  // Statistics of the rules of a refused configuration are removed again: they never count.
  const scope = options.stats.newRulesScope();
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
    compiler.load({ doc, level, parentKey: `${doc.domain}.`, depth: 0 }, doc.descriptors);
  }
  const quota = compileQuotaRules(documents, options.backend);
  compiler.errors.push(...quota.errors);
  if (compiler.errors.length > 0) {
    scope.discard();
    return { ok: false, errors: Object.freeze([...compiler.errors]) };
  }
  scope.keep();
  return { ok: true, snapshot: new CompiledSnapshot(tree, options, quota.rules) };
}
