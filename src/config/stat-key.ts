// How descriptors appear in statistics keys: `domain.key_value.key2`, dots sanitised on request.

/** The text of a key or value inside a statistics key. */
export type Segmenter = (text: string) => string;

/** SANITIZE_DESCRIPTOR_METRIC_DOTS: dots in keys and values become `_` in statistics keys. */
export function segmenter(sanitizeDots: boolean): Segmenter {
  return sanitizeDots ? (text) => text.replace(/\./g, '_') : (text) => text;
}

/** One descriptor entry's part of a statistics key: `key`, or `key_value` when it has a value. */
export function entrySegment(segment: Segmenter, key: string, value: string | undefined): string {
  return value === undefined || value === '' ? segment(key) : `${segment(key)}_${segment(value)}`;
}
