// DogStatsD mogrifiers: a pattern that turns a flat name into a shorter name plus tags.
import { GoRegExp } from '../../lib/go-regexp';
import type { MogrifierSettings } from '../../settings';

interface Compiled {
  readonly pattern: GoRegExp;
  readonly name: string;
  readonly tags: readonly (readonly [string, string])[];
}

/**
 * Replaces $0, $1 ... with the match groups (a group that took no part: empty, as in Go); an
 * index past the groups stays as written.
 */
function expand(template: string, groups: readonly string[]): string {
  return template.replace(/\$(\d+)/g, (whole, index: string) => groups[Number(index)] ?? whole);
}

/**
 * The mogrifiers, tried in the order configured; the first whose pattern matches applies.
 * Patterns are Go regular expressions (the settings refused any Go would not compile).
 */
export class Mogrifier {
  private readonly entries: readonly Compiled[];
  private readonly cache = new Map<string, { name: string; tags: string[] }>();

  constructor(settings: readonly MogrifierSettings[]) {
    this.entries = settings.map((m) => ({
      pattern: GoRegExp.mustCompile(m.pattern),
      name: m.metricName,
      tags: Object.entries(m.tags),
    }));
  }

  /** The name and tags for a flat name; unchanged and without tags when nothing matches. */
  apply(flatName: string): { name: string; tags: string[] } {
    const cached = this.cache.get(flatName);
    if (cached !== undefined) return cached;
    let result = { name: flatName, tags: [] as string[] };
    for (const entry of this.entries) {
      const match = entry.pattern.exec(flatName);
      if (match === null) continue;
      const groups = match;
      result = {
        name: expand(entry.name, groups),
        tags: entry.tags.map(([key, value]) => `${key}:${expand(value, groups)}`),
      };
      break;
    }
    // Names come from a bounded set (the cardinality cap), so the cache is bounded too.
    this.cache.set(flatName, result);
    return result;
  }
}
