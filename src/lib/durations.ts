// Go-syntax durations ("150us", "1m30s", "10s"), as the reference service reads them.

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
});

const PART = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Parses a Go duration string into milliseconds (fractional for sub-millisecond values).
 * Returns undefined when the text is not a Go duration. "0" alone is accepted, as in Go;
 * any other number needs a unit.
 */
export function parseGoDurationMs(text: string): number | undefined {
  let rest = text.trim();
  if (rest === '') return undefined;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  while (rest !== '') {
    const match = PART.exec(rest);
    if (match === null) return undefined;
    const [whole, amount, unit] = match as unknown as [string, string, string];
    const unitMs = UNIT_MS[unit];
    if (unitMs === undefined) return undefined;
    total += Number(amount) * unitMs;
    rest = rest.slice(whole.length);
  }
  return sign * total;
}
