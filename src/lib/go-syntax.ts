// Go spellings the reference reads (booleans, regular expressions) mapped to JavaScript.

/** What Go's strconv.ParseBool accepts as true. */
export const GO_TRUE: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
/** What Go's strconv.ParseBool accepts as false. */
export const GO_FALSE: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A boolean as Go's strconv.ParseBool reads it; undefined for anything else. */
export function parseGoBool(text: string): boolean | undefined {
  if (GO_TRUE.has(text)) return true;
  if (GO_FALSE.has(text)) return false;
  return undefined;
}

/** Go regular expressions spell named groups (?P<name>...); JavaScript spells them (?<name>...). */
export function goRegExpToJs(pattern: string): string {
  return pattern.replace(/\(\?P</g, '(?<');
}
