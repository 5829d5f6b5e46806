// Cache keys in the reference format, so a fleet can mix this service with the reference.
import type { DescriptorEntry } from '../config';

/**
 * `<prefix><domain>_<key1>_<value1>_..._<window start><suffix>`; a shared-threshold entry writes
 * its wildcard pattern instead of the runtime value. `suffix` is empty for the reference's keys;
 * a token bucket puts `tat` where the window start goes.
 */
export function cacheKey(
  prefix: string,
  domain: string,
  entries: readonly DescriptorEntry[],
  sharedValues: readonly (string | undefined)[] | undefined,
  windowStartSeconds: number | 'tat',
  suffix = '',
): string {
  let key = `${prefix}${domain}_`;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    if (entry === undefined) continue;
    key += `${entry.key}_${sharedValues?.[i] ?? entry.value}_`;
  }
  return key + String(windowStartSeconds) + suffix;
}
