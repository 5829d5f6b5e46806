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
