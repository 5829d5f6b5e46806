// The configuration's part of RLQS: a file's quota_buckets read into rules with positions, and
// every document's rules compiled into the snapshot's rule set (src/quota holds the model).
import { isMap, isScalar, isSeq } from 'yaml';
import type { QuotaRuleSet } from '../quota/model';
import {
  mergeQuotaRules,
  parseQuotaBuckets,
  type QuotaRule,
  type QuotaSourcePosition,
} from '../quota/model';
import type { ConfigDocument } from './document';
import { ConfigError } from './errors';
import type { BackendCapabilities } from './limits';
import type { YamlNode, YamlReader } from './yaml-reader';

/** `quota_buckets[0].bucket.tenant` as steps below the list: [0, 'bucket', 'tenant']. */
function steps(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const match of path.matchAll(/\[(\d+)\]|\.([^.[]+)/g))
    out.push(match[1] === undefined ? (match[2] ?? '') : Number(match[1]));
  return out;
}

/** The node at `path` below the list, or the deepest one found on the way. */
function nodeAt(reader: YamlReader, list: YamlNode, path: string): YamlNode {
  let node = list;
  for (const step of steps(path)) {
    let next: YamlNode | null = null;
    if (typeof step === 'number' && isSeq(node)) next = reader.resolve(node.items[step]);
    else if (typeof step === 'string' && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === step);
      next = pair === undefined ? null : reader.resolve(pair.value ?? pair.key);
    }
    if (next === null) return node;
    node = next;
  }
  return node;
}

/**
 * Reads a file's `quota_buckets` (the node under that key) into rules; the first problem
 * refuses the file, with its line and column, as the loader refuses the rest of a file.
 */
export function readQuotaBuckets(
  reader: YamlReader,
  list: YamlNode | null,
  where: { readonly domain: string; readonly source: string },
): readonly QuotaRule[] | ConfigError {
  if (list === null) return [];
  const locate = (path: string): QuotaSourcePosition | undefined => {
    const position = reader.position(nodeAt(reader, list, path));
    return position === undefined ? undefined : { ...position, path };
  };
  const result = parseQuotaBuckets(reader.json(list), where, locate);
  if (result.ok) return result.rules;
  const [first] = result.problems;
  if (first === undefined) return [];
  return new ConfigError(first.code, where.source, first.reason, first.position);
}

/** Why a backend cannot share budgets between replicas; undefined when it can. */
function cannotShare(backend: BackendCapabilities | undefined): string | undefined {
  if (backend?.name !== 'memcache') return undefined;
  return 'quota_buckets with a budget need demand shared between replicas, which the memcache backend cannot hold; use BACKEND_TYPE=redis (or memory for one replica), or blanket_rule';
}

/**
 * The rules of every document's quota_buckets in load order, or the problems that refuse
 * them: one bucket written twice in one domain, and budgets on a backend that cannot share
 * them. The rules stay plain data, to cross from the compile process in the tables.
 */
export function checkQuotaRules(
  documents: readonly ConfigDocument[],
  backend: BackendCapabilities | undefined,
): { readonly rules: readonly QuotaRule[]; readonly errors: readonly ConfigError[] } {
  const all = documents.flatMap((doc) => doc.quotaBuckets ?? []);
  const errors: ConfigError[] = [];
  const why = cannotShare(backend);
  for (const rule of all) {
    if (why !== undefined && rule.policy.kind === 'budget')
      errors.push(
        new ConfigError('ALGORITHM_UNSUPPORTED', rule.source, `${why} (at ${rule.path})`),
      );
  }
  const merged = mergeQuotaRules(all);
  if (!merged.ok) {
    for (const { rule, earlier } of merged.duplicates) {
      errors.push(
        new ConfigError(
          'DUPLICATE_DESCRIPTOR',
          rule.source,
          `config error, bucket {${rule.id}} of domain '${rule.domain}' at ${rule.path} is already the bucket of ${earlier.path} in ${earlier.source}`,
        ),
      );
    }
  }
  return { rules: errors.length === 0 ? all : [], errors };
}

/** The rule set of checked rules (a domain's files merged in order), built on the main thread. */
export function quotaRuleSetOf(rules: readonly QuotaRule[]): QuotaRuleSet {
  const merged = mergeQuotaRules(rules);
  if (!merged.ok) throw new Error('quota rules came unchecked: a bucket is configured twice');
  return merged.set;
}
