// Go spellings of booleans the reference reads, mapped to JavaScript.

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
