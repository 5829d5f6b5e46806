// What ratelimit-client -replay compares between two services' answers to the same request.
import { UNIT_SECONDS } from '../config';
import type { DescriptorStatus, RateLimitResponse } from '../engine';

/** A service's answer to one request, or the gRPC status code it failed with. */
export type Outcome =
  | { readonly kind: 'answer'; readonly response: RateLimitResponse }
  | { readonly kind: 'error'; readonly code: string };

/** One field that differs; `first` and `second` are the two services' values as text. */
export interface Difference {
  /** `grpc_status`, `overall_code`, `statuses`, or `statuses[i].<field>`. */
  readonly field: string;
  readonly first: string;
  readonly second: string;
  /** Set when the difference has a cause other than the services (a window boundary). */
  readonly note?: string;
}

/** Why a status's remaining and reset may differ although both services are right. */
export const BOUNDARY_NOTE =
  'a window boundary fell between the two calls: compare this request again';

function limitText(status: DescriptorStatus): string {
  const limit = status.currentLimit;
  return limit === undefined ? 'none' : `${limit.requestsPerUnit}/${limit.unit}`;
}

function resetText(status: DescriptorStatus): string {
  const seconds = status.durationUntilResetSeconds;
  return seconds === undefined ? 'none' : `${seconds}s`;
}

/**
 * The reference computes a reset as the unit's seconds minus now modulo them, from its own clock
 * (src/utils/utilities.go, CalculateReset): 1 to the window's length, never 0, so two calls a
 * moment apart read values a second apart, or the two ends of that range across a boundary.
 * Whether two resets differ by at most `tolerance` seconds; `acrossBoundary` when they are that
 * close only once the window's length is taken off (one call in a window, the other in the next).
 */
function resetsAgree(
  a: DescriptorStatus,
  b: DescriptorStatus,
  tolerance: number,
): { agree: boolean; acrossBoundary: boolean } {
  const x = a.durationUntilResetSeconds;
  const y = b.durationUntilResetSeconds;
  if (x === undefined || y === undefined) return { agree: x === y, acrossBoundary: false };
  const gap = Math.abs(x - y);
  if (gap <= tolerance) return { agree: true, acrossBoundary: false };
  const unit = a.currentLimit?.unit;
  const across =
    unit !== undefined && unit === b.currentLimit?.unit && UNIT_SECONDS[unit] - gap <= tolerance;
  return { agree: false, acrossBoundary: across };
}

function compareStatus(
  index: number,
  a: DescriptorStatus,
  b: DescriptorStatus,
  tolerance: number,
): Difference[] {
  const field = (name: string): string => `statuses[${index}].${name}`;
  const found: Omit<Difference, 'note'>[] = [];
  if (a.code !== b.code) found.push({ field: field('code'), first: a.code, second: b.code });
  if (limitText(a) !== limitText(b))
    found.push({ field: field('current_limit'), first: limitText(a), second: limitText(b) });
  if (a.limitRemaining !== b.limitRemaining)
    found.push({
      field: field('limit_remaining'),
      first: String(a.limitRemaining),
      second: String(b.limitRemaining),
    });
  const reset = resetsAgree(a, b, tolerance);
  if (!reset.agree)
    found.push({ field: field('duration_until_reset'), first: resetText(a), second: resetText(b) });
  return reset.acrossBoundary ? found.map((d) => ({ ...d, note: BOUNDARY_NOTE })) : found;
}

function compareResponses(
  a: RateLimitResponse,
  b: RateLimitResponse,
  tolerance: number,
): Difference[] {
  const found: Difference[] = [];
  if (a.overallCode !== b.overallCode)
    found.push({ field: 'overall_code', first: a.overallCode, second: b.overallCode });
  if (a.statuses.length !== b.statuses.length)
    found.push({
      field: 'statuses',
      first: `${a.statuses.length} statuses`,
      second: `${b.statuses.length} statuses`,
    });
  const common = Math.min(a.statuses.length, b.statuses.length);
  for (let i = 0; i < common; i++) {
    const x = a.statuses[i];
    const y = b.statuses[i];
    if (x !== undefined && y !== undefined) found.push(...compareStatus(i, x, y, tolerance));
  }
  return found;
}

/**
 * Every difference between two outcomes of the same request: the gRPC status; then the overall
 * code, the number of statuses and, per descriptor status, its code, current limit
 * (requests_per_unit and unit), limit_remaining and duration_until_reset, the last within
 * `resetToleranceSeconds`. Not compared: limit names, headers and dynamic metadata (the 2023
 * reference sends no names), error messages (wording is each service's own).
 */
export function compareOutcomes(
  a: Outcome,
  b: Outcome,
  resetToleranceSeconds: number,
): Difference[] {
  if (a.kind === 'answer' && b.kind === 'answer')
    return compareResponses(a.response, b.response, resetToleranceSeconds);
  const codeOf = (o: Outcome): string => (o.kind === 'answer' ? 'OK' : o.code);
  return codeOf(a) === codeOf(b)
    ? []
    : [{ field: 'grpc_status', first: codeOf(a), second: codeOf(b) }];
}
