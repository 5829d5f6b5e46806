// The compiled quota bucket rules of every domain, and the most specific rule for a bucket id.
import { RuleIndex } from './rule-index';

/** The units a quota budget may use: Envoy's RateLimitUnit, which has no week. */
export const QUOTA_UNITS = ['SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR'] as const;
export type QuotaUnit = (typeof QUOTA_UNITS)[number];

/** Seconds per unit; a month is 30 days, as the fixed windows count it. */
export const QUOTA_UNIT_SECONDS: Readonly<Record<QuotaUnit, number>> = Object.freeze({
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3600,
  DAY: 86400,
  MONTH: 2_592_000,
  YEAR: 31_536_000,
});

/** One key of a rule's bucket: the value is exact, any (`*`) or a prefix (`abc*`). */
export interface QuotaKeyMatcher {
  readonly key: string;
  /** As written: `acme`, `*` or `ac*`. */
  readonly value: string;
  readonly kind: 'exact' | 'any' | 'prefix';
}

/** What a rule does with the buckets it governs. */
export type QuotaPolicy =
  | {
      readonly kind: 'budget';
      /** How Envoys enforce their share: the only strategy Envoy's filter applies. */
      readonly strategy: 'token_bucket';
      /** The budget of each bucket the rule governs, for all Envoys together. */
      readonly requestsPerUnit: number;
      readonly unit: QuotaUnit;
      /** token_bucket: the bucket size of all Envoys together (default one unit's budget). */
      readonly maxTokens: number;
    }
  | { readonly kind: 'blanket'; readonly rule: 'allow_all' | 'deny_all' };

/** One item of a domain's `quota_buckets`, compiled. */
export interface QuotaRule {
  readonly domain: string;
  /** Unique within the domain: the bucket as written, keys sorted (`name=api,tenant=*`). */
  readonly id: string;
  /** Sorted by key. */
  readonly matchers: readonly QuotaKeyMatcher[];
  readonly policy: QuotaPolicy;
  /** Set by `assignment_ttl`; undefined: the service's default. */
  readonly assignmentTtlMs: number | undefined;
  /** The file (or resource) and the item's path in it, for operators. */
  readonly source: string;
  readonly path: string;
}

/** A bucket id as Envoy sends it: key and value pairs, in no particular order. */
export type BucketPairs = ReadonlyMap<string, string>;

/** [keys, `*` values, prefixes, literal characters of the prefixes] of a rule. */
function specificity(rule: QuotaRule): [number, number, number, number] {
  let any = 0;
  let prefix = 0;
  let literal = 0;
  for (const m of rule.matchers) {
    if (m.kind === 'any') any += 1;
    else if (m.kind === 'prefix') {
      prefix += 1;
      literal += m.value.length - 1;
    }
  }
  return [rule.matchers.length, any, prefix, literal];
}

/**
 * Most specific first: more keys, then fewer `*` values, then fewer prefixes, then longer
 * prefixes (`abc*` before `a*`, their literal characters added up over the keys); the sort is
 * stable, so rules that tie stay in file order.
 */
function bySpecificity(rules: readonly QuotaRule[]): QuotaRule[] {
  const keyed = rules.map((rule) => ({ rule, s: specificity(rule) }));
  keyed.sort((a, b) => b.s[0] - a.s[0] || a.s[1] - b.s[1] || a.s[2] - b.s[2] || b.s[3] - a.s[3]);
  return keyed.map((k) => k.rule);
}

/** The rules of every domain; immutable, safe to share between streams. */
export class QuotaRuleSet {
  private readonly ordered: ReadonlyMap<string, readonly QuotaRule[]>;
  private readonly indexes: ReadonlyMap<string, RuleIndex<QuotaRule>>;

  /** `rules` per domain in file order. */
  constructor(rules: ReadonlyMap<string, readonly QuotaRule[]>) {
    const ordered = new Map<string, readonly QuotaRule[]>();
    const indexes = new Map<string, RuleIndex<QuotaRule>>();
    for (const [domain, list] of rules) {
      if (list.length === 0) continue;
      const sorted = Object.freeze(bySpecificity(list));
      ordered.set(domain, sorted);
      indexes.set(domain, new RuleIndex(sorted));
    }
    this.ordered = ordered;
    this.indexes = indexes;
    Object.freeze(this);
  }

  /** No rules anywhere. */
  static readonly EMPTY = new QuotaRuleSet(new Map());

  get isEmpty(): boolean {
    return this.ordered.size === 0;
  }

  /** Domains with at least one rule. */
  domains(): string[] {
    return [...this.ordered.keys()];
  }

  /** A domain's rules, most specific first. */
  rulesOf(domain: string): readonly QuotaRule[] {
    return this.ordered.get(domain) ?? [];
  }

  /**
   * The rule governing a bucket: every key of the rule must be in the bucket id with a value
   * it accepts (the bucket id may have more keys); of several, the most specific.
   */
  match(domain: string, bucket: BucketPairs): QuotaRule | undefined {
    return this.indexes.get(domain)?.match(bucket);
  }
}

/** Whether two rules hand out the same assignments (a reload that changes nothing pushes nothing). */
export function isSamePolicy(a: QuotaRule, b: QuotaRule): boolean {
  return (
    a.assignmentTtlMs === b.assignmentTtlMs && JSON.stringify(a.policy) === JSON.stringify(b.policy)
  );
}

/** A bucket two rules of one domain share (files merged by MERGE_DOMAIN_CONFIG). */
export interface DuplicateRule {
  readonly rule: QuotaRule;
  readonly earlier: QuotaRule;
}

/**
 * The rule set of rules read from every file, in load order; a domain's files are merged. Two
 * rules of one domain with the same bucket refuse the load: the later could govern nothing.
 */
export function mergeQuotaRules(
  rules: readonly QuotaRule[],
):
  | { readonly ok: true; readonly set: QuotaRuleSet }
  | { readonly ok: false; readonly duplicates: readonly DuplicateRule[] } {
  const byDomain = new Map<string, QuotaRule[]>();
  const seen = new Map<string, QuotaRule>();
  const duplicates: DuplicateRule[] = [];
  for (const rule of rules) {
    const key = `${rule.domain}\u0000${rule.id}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      duplicates.push({ rule, earlier });
      continue;
    }
    seen.set(key, rule);
    const list = byDomain.get(rule.domain) ?? [];
    list.push(rule);
    byDomain.set(rule.domain, list);
  }
  if (duplicates.length > 0) return { ok: false, duplicates };
  return { ok: true, set: rules.length === 0 ? QuotaRuleSet.EMPTY : new QuotaRuleSet(byDomain) };
}
