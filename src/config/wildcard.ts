// Matching of configured values with `*` wildcards, split once at load time.

/** Splits a configured value on `*`; undefined when it has no wildcard. */
export function wildcardParts(value: string): readonly string[] | undefined {
  return value.includes('*') ? Object.freeze(value.split('*')) : undefined;
}

/**
 * True when `value` matches the pattern split into `parts`: each `*` matches zero or more
 * characters, and the literal parts must appear in order without overlapping.
 */
export function matchesWildcard(parts: readonly string[], value: string): boolean {
  const last = parts.length - 1;
  const head = parts[0] ?? '';
  const tail = parts[last] ?? '';
  if (last === 0) return head === value;
  if (value.length < head.length + tail.length) return false;
  if (!value.startsWith(head) || !value.endsWith(tail)) return false;
  let from = head.length;
  const end = value.length - tail.length;
  for (let i = 1; i < last; i++) {
    const part = parts[i] ?? '';
    const at = value.indexOf(part, from);
    if (at < 0 || at + part.length > end) return false;
    from = at + part.length;
  }
  return true;
}
