// RateLimit-* headers for the descriptor closest to its limit, and per unit.
import type { Unit } from '../config';
import type { LimiterSettings } from '../settings';
import type { DescriptorStatus, HeaderValue } from './types';

const NO_HEADERS: readonly HeaderValue[] = Object.freeze([]);

interface HeaderSettings {
  readonly limit: string;
  readonly remaining: string;
  readonly reset: string;
}

const UNIT_PLURAL: Readonly<Record<Unit, string>> = Object.freeze({
  SECOND: 'Seconds',
  MINUTE: 'Minutes',
  HOUR: 'Hours',
  DAY: 'Days',
  WEEK: 'Weeks',
  MONTH: 'Months',
  YEAR: 'Years',
});

/** The three standard headers describing one status. */
function limitHeaders(status: DescriptorStatus, names: HeaderSettings): HeaderValue[] {
  const limit = status.currentLimit;
  if (limit === undefined) return [];
  return [
    { key: names.limit, value: String(limit.requestsPerUnit) },
    { key: names.remaining, value: String(status.limitRemaining) },
    { key: names.reset, value: String(status.durationUntilResetSeconds ?? 0) },
  ];
}

/**
 * `<limit>-<Units>` and `<remaining>-<Units>` for the lowest remaining count of each unit,
 * in the order the units first appear.
 */
function perUnitHeaders(
  statuses: readonly DescriptorStatus[],
  names: HeaderSettings,
): HeaderValue[] {
  const lowest = new Map<Unit, DescriptorStatus>();
  for (const status of statuses) {
    const unit = status.currentLimit?.unit;
    if (unit === undefined) continue;
    const seen = lowest.get(unit);
    if (seen === undefined || status.limitRemaining < seen.limitRemaining) lowest.set(unit, status);
  }
  const out: HeaderValue[] = [];
  for (const [unit, status] of lowest) {
    out.push({
      key: `${names.limit}-${UNIT_PLURAL[unit]}`,
      value: String(status.currentLimit?.requestsPerUnit ?? 0),
    });
    out.push({
      key: `${names.remaining}-${UNIT_PLURAL[unit]}`,
      value: String(status.limitRemaining),
    });
  }
  return out;
}

/**
 * response_headers_to_add: the standard headers of the status closest to its limit
 * (RESPONSE_HEADERS_ENABLED), then the per-unit ones (RESPONSE_HEADERS_PER_UNIT).
 */
export function responseHeaders(
  settings: LimiterSettings,
  closest: DescriptorStatus | undefined,
  statuses: readonly DescriptorStatus[],
): readonly HeaderValue[] {
  const names = settings.responseHeaders;
  if (!names.enabled && !names.perUnit) return NO_HEADERS;
  const headers: HeaderValue[] = [];
  if (names.enabled && closest !== undefined) headers.push(...limitHeaders(closest, names));
  if (names.perUnit) headers.push(...perUnitHeaders(statuses, names));
  return headers;
}

/** request_headers_to_add: the standard headers of the closest status, when enabled. */
export function requestHeaders(
  settings: LimiterSettings,
  closest: DescriptorStatus | undefined,
): readonly HeaderValue[] {
  return settings.requestHeaders.enabled && closest !== undefined
    ? limitHeaders(closest, settings.requestHeaders)
    : NO_HEADERS;
}
