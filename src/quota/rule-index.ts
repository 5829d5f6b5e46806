// One domain's rules indexed by an exact key and value, so that finding a bucket's rule checks
// the few rules its pairs name (and those without an exact value), not every rule in turn.

/** One key of a rule, as rules.ts compiles it: an exact value, any (`*`) or a prefix (`ab*`). */
interface KeyMatcher {
  readonly key: string;
  readonly value: string;
  readonly kind: 'exact' | 'any' | 'prefix';
}

/** What the index needs of a rule. */
interface Rule {
  readonly matchers: readonly KeyMatcher[];
}

type Pairs = ReadonlyMap<string, string>;

function matches(matcher: KeyMatcher, value: string | undefined): boolean {
  if (value === undefined) return false;
  switch (matcher.kind) {
    case 'any':
      return true;
    case 'exact':
      return value === matcher.value;
    case 'prefix':
      return value.startsWith(matcher.value.slice(0, -1));
  }
}

function isMatch(rule: Rule, bucket: Pairs): boolean {
  for (const m of rule.matchers) if (!matches(m, bucket.get(m.key))) return false;
  return true;
}

/**
 * A domain's rules, most specific first. Each rule with an exact value is filed under one such
 * key and value; a bucket can match it only if it has that pair. Rules with only `*` and
 * prefixes are checked for every bucket. The rule found is the first in order that matches,
 * as a walk of the whole list would find.
 */
export class RuleIndex<R extends Rule> {
  /** key → value → positions in `ordered`, ascending. */
  private readonly exact = new Map<string, Map<string, number[]>>();
  /** Positions of the rules without an exact value, ascending. */
  private readonly others: number[] = [];

  constructor(private readonly ordered: readonly R[]) {
    ordered.forEach((rule, position) => {
      const anchor = rule.matchers.find((m) => m.kind === 'exact');
      if (anchor === undefined) {
        this.others.push(position);
        return;
      }
      let values = this.exact.get(anchor.key);
      if (values === undefined) this.exact.set(anchor.key, (values = new Map<string, number[]>()));
      const list = values.get(anchor.value);
      if (list === undefined) values.set(anchor.value, [position]);
      else list.push(position);
    });
  }

  /** The first rule in order that governs the bucket, or undefined. */
  match(bucket: Pairs): R | undefined {
    let best = this.firstIn(this.others, bucket, Infinity);
    for (const [key, value] of bucket) {
      const list = this.exact.get(key)?.get(value);
      if (list !== undefined) best = this.firstIn(list, bucket, best);
    }
    return best === Infinity ? undefined : this.ordered[best];
  }

  /** The first position of `list` before `best` whose rule matches, else `best`. */
  private firstIn(list: readonly number[], bucket: Pairs, best: number): number {
    for (const position of list) {
      if (position >= best) return best;
      const rule = this.ordered[position];
      if (rule !== undefined && isMatch(rule, bucket)) return position;
    }
    return best;
  }
}
