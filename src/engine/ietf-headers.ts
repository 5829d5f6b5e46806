// LIMIT_RESPONSE_HEADERS_FORMAT=ietf: the RateLimit-Policy and RateLimit fields of the IETF
// httpapi ratelimit-headers draft (-11), one item per limit of every descriptor of the request.
import { UNIT_SECONDS } from '../config';
import type { LimitReport } from './limit-check';
import type { HeaderValue } from './types';

/** The draft's field names; the legacy header-name settings do not apply to them. */
export const POLICY_FIELD = 'RateLimit-Policy';
export const LIMIT_FIELD = 'RateLimit';

/**
 * A structured-field String (RFC 9651 3.3.3): printable ASCII with `\` and `"` escaped. Other
 * characters of a configured name cannot be carried and become `_`.
 */
function sfString(text: string): string {
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else out += code >= 0x20 && code <= 0x7e ? ch : '_';
  }
  return `${out}"`;
}

/**
 * Each limit's policy name: its configured `name`, else its statistics key (the rule's, with the
 * unit for an item of rate_limits), which names no runtime value. A name used twice in one
 * response (two descriptors matching one rule) is told apart by `#2`, `#3` ...
 */
function policyNames(reports: readonly LimitReport[]): string[] {
  const seen = new Map<string, number>();
  return reports.map(({ limit }) => {
    const base = limit.name ?? limit.statKey;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return count === 1 ? base : `${base}#${count}`;
  });
}

/**
 * The two fields for every limit reported: `RateLimit-Policy: "name";q=<limit>;w=<seconds>`
 * (a token bucket adds its bucket size as `rlts-burst`, a vendor parameter as the draft asks),
 * and `RateLimit: "name";r=<remaining>;t=<seconds until reset>`. None when no limit applied.
 */
export function ietfHeaders(reports: readonly LimitReport[]): HeaderValue[] {
  if (reports.length === 0) return [];
  const names = policyNames(reports);
  const policies: string[] = [];
  const limits: string[] = [];
  reports.forEach(({ limit, status }, i) => {
    const name = sfString(names[i] ?? '');
    const burst = limit.algorithm === 'token_bucket' ? `;rlts-burst=${limit.burst}` : '';
    policies.push(`${name};q=${limit.requestsPerUnit};w=${UNIT_SECONDS[limit.unit]}${burst}`);
    const reset = status.durationUntilResetSeconds ?? 0;
    limits.push(`${name};r=${status.limitRemaining};t=${reset}`);
  });
  return [
    { key: POLICY_FIELD, value: policies.join(', ') },
    { key: LIMIT_FIELD, value: limits.join(', ') },
  ];
}
