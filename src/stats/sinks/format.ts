// Number formatting of statsd lines.

/** Integers as written; fractions with at most three decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value)
    ? String(value)
    : value.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
}

/** `name:value|type`, with the sample rate when samples were thinned. */
export function statsdLine(
  name: string,
  value: number,
  type: 'c' | 'g' | 'ms',
  sampleRate = 1,
): string {
  return `${name}:${formatNumber(value)}|${type}${sampleRate < 1 ? `|@${formatNumber(sampleRate)}` : ''}`;
}

/** Characters that would end a DogStatsD tag key, or a tag value (`:` is fine in a value). */
const TAG_KEY_BREAKERS = /[:|@,#\n\r]/g;
const TAG_VALUE_BREAKERS = /[|@,#\n\r]/g;

/** `|#k:v,k2:v2` for DogStatsD tags, with characters that break the line protocol as `_`. */
export function dogStatsdTagSuffix(tags: readonly string[]): string {
  if (tags.length === 0) return '';
  const safe = tags.map((tag) => {
    const colon = tag.indexOf(':');
    if (colon < 1) return tag.replace(TAG_KEY_BREAKERS, '_');
    const key = tag.slice(0, colon).replace(TAG_KEY_BREAKERS, '_');
    return `${key}:${tag.slice(colon + 1).replace(TAG_VALUE_BREAKERS, '_')}`;
  });
  return `|#${safe.join(',')}`;
}
