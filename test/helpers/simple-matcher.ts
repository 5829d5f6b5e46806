// The matcher the compiled snapshot replaced, kept as the test oracle: every wildcard tried in order.
import type { ConfigDocument, DescriptorDoc, DescriptorQuery } from '../../src/config';

/** `*` matches any run of characters, the literal parts in order, without overlap. */
function matches(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  const head = parts[0] ?? '';
  const tail = parts[parts.length - 1] ?? '';
  if (parts.length === 1) return pattern === value;
  if (value.length < head.length + tail.length) return false;
  if (!value.startsWith(head) || !value.endsWith(tail)) return false;
  let from = head.length;
  const end = value.length - tail.length;
  for (const part of parts.slice(1, -1)) {
    const at = value.indexOf(part, from);
    if (at < 0 || at + part.length > end) return false;
    from = at + part.length;
  }
  return true;
}

interface OracleNode {
  readonly doc: DescriptorDoc;
  readonly statKey: string;
  readonly children: OracleNode[];
}

function nodesOf(docs: readonly DescriptorDoc[], parentKey: string): OracleNode[] {
  return docs.map((doc) => {
    const statKey = `${parentKey}.${doc.key}${doc.value === undefined ? '' : `_${doc.value}`}`;
    return { doc, statKey, children: nodesOf(doc.descriptors, statKey) };
  });
}

/** One step: the exact value, else the first wildcard that matches, else the key alone. */
function step(level: readonly OracleNode[], key: string, value: string): OracleNode | undefined {
  const sameKey = level.filter((n) => n.doc.key === key);
  return (
    sameKey.find((n) => n.doc.value === value && !value.includes('*')) ??
    sameKey.find(
      (n) => n.doc.value !== undefined && n.doc.value.includes('*') && matches(n.doc.value, value),
    ) ??
    sameKey.find((n) => n.doc.value === undefined)
  );
}

/** The old matching over documents of distinct domains (no merging), by statistics key. */
export class SimpleMatcher {
  private readonly domains = new Map<string, OracleNode[]>();

  constructor(documents: readonly ConfigDocument[]) {
    for (const doc of documents) this.domains.set(doc.domain, nodesOf(doc.descriptors, doc.domain));
  }

  /** The statistics key of the rule that applies, undefined when none does. */
  find(domain: string, query: DescriptorQuery): string | undefined {
    let level = this.domains.get(domain);
    let node: OracleNode | undefined;
    for (const entry of query.entries) {
      if (level === undefined) return undefined;
      node = step(level, entry.key, entry.value);
      if (node === undefined) return undefined;
      level = node.children.length > 0 ? node.children : undefined;
    }
    const hasRule = node?.doc.rateLimit !== undefined || (node?.doc.rateLimits.length ?? 0) > 0;
    return hasRule && query.entries.length > 0 ? node?.statKey : undefined;
  }
}
