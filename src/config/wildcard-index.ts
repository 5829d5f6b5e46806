// The wildcard values under one key, found in the length of the request value, not their number.
import { matchesWildcard, wildcardParts } from './wildcard';

/** A pattern with `*` inside, tried only when the value starts with its literal head. */
interface Inner {
  readonly node: number;
  readonly parts: readonly string[];
}

/** A node of a radix tree over the patterns' literal heads (the text before the first `*`). */
interface TrieNode {
  /** The text from the parent to here. */
  label: string;
  children: Map<number, TrieNode> | undefined;
  /** The node of the pattern `<head>*`, whose every value with this head matches; -1 for none. */
  prefix: number;
  /** Patterns with this head and more after the `*`, in configuration order. */
  inner: Inner[] | undefined;
}

function trieNode(label: string): TrieNode {
  return { label, children: undefined, prefix: -1, inner: undefined };
}

/** How many characters `a` from `from` and `b` have in common at their start. */
function common(a: string, from: number, b: string): number {
  const most = Math.min(a.length - from, b.length);
  let n = 0;
  while (n < most && a.charCodeAt(from + n) === b.charCodeAt(n)) n += 1;
  return n;
}

/**
 * Wildcard values of one key at one level. The first configured pattern that matches wins, as
 * when they were tried one by one: node ids grow in configuration order, so the match is the
 * smallest node among the patterns that match. Those can only be patterns whose head is a
 * prefix of the value: the walk down the tree visits exactly them, one step per character.
 */
export class WildcardIndex {
  private readonly root = trieNode('');
  /** Every node, in configuration order, for listing. */
  readonly nodes: number[] = [];

  /** Adds the pattern `value` (with at least one `*`) of node `node`; nodes come in order. */
  add(value: string, node: number): void {
    const parts = wildcardParts(value) ?? [value];
    const head = parts[0] ?? '';
    const at = this.insert(head);
    this.nodes.push(node);
    if (parts.length === 2 && parts[1] === '') {
      if (at.prefix < 0) at.prefix = node;
      return;
    }
    (at.inner ??= []).push({ node, parts });
  }

  /** The trie node of `head`, made (splitting an edge if need be) when missing. */
  private insert(head: string): TrieNode {
    let node = this.root;
    let pos = 0;
    while (pos < head.length) {
      const code = head.charCodeAt(pos);
      const child = node.children?.get(code);
      if (child === undefined) {
        const leaf = trieNode(head.slice(pos));
        (node.children ??= new Map()).set(code, leaf);
        return leaf;
      }
      const shared = common(head, pos, child.label);
      if (shared < child.label.length) {
        // The new head ends or turns inside this edge: split it.
        const middle = trieNode(child.label.slice(0, shared));
        child.label = child.label.slice(shared);
        middle.children = new Map([[child.label.charCodeAt(0), child]]);
        node.children?.set(code, middle);
        node = middle;
      } else {
        node = child;
      }
      pos += shared;
    }
    return node;
  }

  /** The node of the first configured pattern that `value` matches; -1 when none does. */
  find(value: string): number {
    let best = -1;
    let node: TrieNode | undefined = this.root;
    let pos = 0;
    for (;;) {
      if (node.prefix >= 0 && (best < 0 || node.prefix < best)) best = node.prefix;
      if (node.inner !== undefined) best = firstInner(node.inner, value, best);
      if (pos >= value.length) return best;
      const child: TrieNode | undefined = node.children?.get(value.charCodeAt(pos));
      if (child === undefined || !value.startsWith(child.label, pos)) return best;
      pos += child.label.length;
      node = child;
    }
  }
}

/** The first of `inner` (in configuration order) before `best` that matches `value`. */
function firstInner(inner: readonly Inner[], value: string, best: number): number {
  for (const candidate of inner) {
    if (best >= 0 && candidate.node > best) return best;
    if (matchesWildcard(candidate.parts, value)) return candidate.node;
  }
  return best;
}
