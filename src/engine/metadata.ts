// RESPONSE_DYNAMIC_METADATA: the request and the metadata of the rules it passed, for the proxy.
import type { JsonObject, JsonValue } from '../config';
import type { RateLimitRequest } from './types';

function isObject(value: JsonValue | undefined): value is JsonObject {
  return (
    value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value)
  );
}

/** Merges `src` into `dest`: maps merge recursively, otherwise the first value wins. */
function merge(dest: JsonObject, src: JsonObject): void {
  for (const [key, value] of Object.entries(src)) {
    const existing = dest[key];
    if (existing === undefined) dest[key] = structuredClone(value);
    else if (isObject(existing) && isObject(value)) merge(existing, value);
  }
}

/**
 * The dynamic metadata of a response, shaped as the reference service shapes it;
 * `passedMetadata` holds the metadata of the rules the request passed, in request order.
 */
export function dynamicMetadata(
  request: RateLimitRequest,
  passedMetadata: readonly JsonObject[],
): JsonObject {
  const descriptors: JsonValue[] = request.descriptors.map((d) => {
    const out: JsonObject = { entries: d.entries.map((e) => `${e.key}=${e.value}`) };
    if (d.limit !== undefined)
      out.limit = `requests_per_unit:${d.limit.requestsPerUnit} unit:${d.limit.unit}`;
    if (d.hitsAddend !== undefined) out.hitsAddend = d.hitsAddend;
    return out;
  });
  const result: JsonObject = { domain: request.domain, descriptors };
  if (request.hitsAddend !== 0) result.hitsAddend = request.hitsAddend;
  const metadata: JsonObject = {};
  for (const ruleMetadata of passedMetadata) merge(metadata, ruleMetadata);
  if (Object.keys(metadata).length > 0) result.metadata = metadata;
  return result;
}
