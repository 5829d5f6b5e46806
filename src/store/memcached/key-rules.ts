// Which keys memcached can store: at most 250 bytes, no spaces, no control characters.

/** memcached's limit on a key's length, in bytes. */
export const MAX_KEY_BYTES = 250;

/**
 * Why memcached cannot store `key`, or undefined when it can. The rules are the ones the
 * reference's client enforces before it sends anything (bytes up to 0x20 and 0x7f refused).
 */
export function unstorableKeyReason(key: string): string | undefined {
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) {
      const what =
        code === 0x20 ? 'a space' : `control character 0x${code.toString(16).padStart(2, '0')}`;
      return `contains ${what} at position ${i}; memcached keys may not contain spaces or control characters`;
    }
  }
  // Cheap upper bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (key.length * 3 > MAX_KEY_BYTES) {
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes > MAX_KEY_BYTES)
      return `is ${bytes} bytes long; memcached keys are at most ${MAX_KEY_BYTES} bytes`;
  }
  return undefined;
}
