// Global tags (EXTRA_TAGS) in the two shapes the reference emits: in the name, and DogStatsD tags.

/** Characters that would break a statsd line or a name segment. */
function clean(text: string): string {
  return text.replace(/[.:|]/g, '_');
}

function sortedPairs(tags: Readonly<Record<string, string>>): [string, string][] {
  return Object.entries(tags)
    .filter(([k, v]) => k !== '' && v !== '')
    .map(([k, v]): [string, string] => [clean(k), clean(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The reference's statsd encoding of tags, appended to every name: `.__k1=v1.__k2=v2`, sorted
 * by key, with `.`, `:` and `|` in keys and values replaced by `_`.
 */
export function nameTagSuffix(tags: Readonly<Record<string, string>>): string {
  return sortedPairs(tags)
    .map(([k, v]) => `.__${k}=${v}`)
    .join('');
}

/** DogStatsD tags `k:v`, sorted by key, cleaned the same way. */
export function tagList(tags: Readonly<Record<string, string>>): string[] {
  return sortedPairs(tags).map(([k, v]) => `${k}:${v}`);
}
