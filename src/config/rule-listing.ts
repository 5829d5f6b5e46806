// The loaded rules as lists for operators: /rlconfig's lines and the rule listing with paths.
import { ruleOf, type Level, type NodeTable } from './node-table';
import { NODE } from './tables';
import type { PathStep, RateLimitRule, RuleListing } from './types';

/**
 * A rule's lines on /rlconfig. A rule the reference could load gets the reference's exact line:
 * scripts parse it, so nothing is added to it. Other limits get a line each, with the reference's
 * fields first and their algorithm (and burst) after.
 */
export function dumpLines(r: RateLimitRule): string[] {
  const line = (key: string, unit: string, rpu: number): string =>
    `${key}: unit=${unit} requests_per_unit=${rpu}, shadow_mode: ${r.isShadow}, quota_mode: ${r.isQuota}`;
  const only = r.limits[0];
  if (r.limits.length === 0 || (r.limits.length === 1 && only?.algorithm === 'fixed_window'))
    return [line(r.statKey, r.unit ?? 'UNKNOWN', r.requestsPerUnit)];
  return r.limits.map(
    (l) =>
      `${line(l.statKey, l.unit, l.requestsPerUnit)}, algorithm: ${l.algorithm}` +
      (l.algorithm === 'token_bucket' ? `, burst: ${l.burst}` : ''),
  );
}

/** The nodes of one level in listing order: per key, exact values, wildcards, the key alone. */
function nodesOf(level: Level): number[] {
  const nodes: number[] = [];
  for (const entry of level.values()) {
    nodes.push(...entry.exact.values());
    if (entry.wildcards !== undefined) nodes.push(...entry.wildcards.nodes);
    if (entry.keyOnly >= 0) nodes.push(entry.keyOnly);
  }
  return nodes;
}

/**
 * Every rule with its path and source, domains in `domains` order, in configuration order
 * within one. `known` gives the rule object of a node already made, so that it is listed as is.
 */
export function listRules(
  t: NodeTable,
  domains: readonly string[],
  known: (node: number) => RateLimitRule | undefined,
): RuleListing[] {
  const out: RuleListing[] = [];
  const { flags, children, source, key } = t.header.columns;
  const walk = (domain: string, level: Level, above: readonly PathStep[]): void => {
    for (const node of nodesOf(level)) {
      const step = { key: t.header.keys[key[node] ?? -1] ?? '', value: t.values[node] };
      const path = [...above, step];
      const rule = known(node) ?? ruleOf(t, node);
      if (rule !== undefined) {
        const nodeFlags = flags[node] ?? 0;
        out.push({
          domain,
          path,
          rule,
          source: t.header.sources[source[node] ?? -1] ?? '',
          isValueToMetric: (nodeFlags & NODE.VALUE_TO_METRIC) !== 0,
          isShareThreshold: (nodeFlags & NODE.SHARE_THRESHOLD) !== 0,
        });
      }
      const below = t.levels[children[node] ?? -1];
      if (below !== undefined) walk(domain, below, path);
    }
  };
  for (const domain of domains) {
    const level = t.domains.get(domain);
    if (level !== undefined) walk(domain, level, []);
  }
  return out;
}
