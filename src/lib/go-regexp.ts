// Go regular expressions (RE2 syntax, linear-time matching) for what the reference reads with Go's
// regexp package: DogStatsD mogrifier patterns and the regex rules of a statsd mapping file.
import { RE2JS } from 're2js';

/** A compiled pattern, or why Go's regexp.Compile would refuse it (in Go's own words). */
export type GoRegExpResult =
  | { readonly ok: true; readonly regexp: GoRegExp }
  | { readonly ok: false; readonly reason: string };

/**
 * A pattern compiled with RE2's syntax and semantics, as Go's regexp.Compile reads it: `(?i)` and
 * the other flag groups, `(?P<name>...)` and `(?<name>...)`, POSIX classes such as `[[:digit:]]`,
 * `\pL`, `\Q...\E`, leftmost-first matching. No backreferences or lookaround (refused, as Go
 * refuses them), and matching takes time linear in the input.
 */
export class GoRegExp {
  private readonly groupCount: number;
  private readonly names: Readonly<Record<string, number>>;

  private constructor(
    private readonly compiled: RE2JS,
    /** The pattern as written. */
    readonly source: string,
  ) {
    this.groupCount = compiled.groupCount();
    this.names = compiled.namedGroups();
  }

  /** Compiles `pattern`; a pattern Go would refuse comes back with Go's reason. */
  static compile(pattern: string): GoRegExpResult {
    try {
      return { ok: true, regexp: new GoRegExp(RE2JS.compile(pattern), pattern) };
    } catch (err: unknown) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Compiles a pattern already checked with compile(); throws with Go's reason otherwise. */
  static mustCompile(pattern: string): GoRegExp {
    const result = GoRegExp.compile(pattern);
    if (!result.ok)
      throw new Error(`regexp: Compile(${JSON.stringify(pattern)}): ${result.reason}`);
    return result.regexp;
  }

  /**
   * The leftmost match anywhere in `input` and its groups, as Go's FindStringSubmatch returns
   * them: index 0 the whole match, a group that took no part the empty string; null for none.
   */
  exec(input: string): string[] | null {
    const matcher = this.compiled.matcher(input);
    if (!matcher.find()) return null;
    const groups = new Array<string>(this.groupCount + 1);
    for (let i = 0; i <= this.groupCount; i++) groups[i] = matcher.group(i) ?? '';
    return groups;
  }

  /** The number of capturing groups, not counting the whole match. */
  get groups(): number {
    return this.groupCount;
  }

  /** The index of the group `(?P<name>...)` names, or undefined when none does. */
  groupIndex(name: string): number | undefined {
    return Object.hasOwn(this.names, name) ? this.names[name] : undefined;
  }
}
