// RateLimit-* headers for the descriptor closest to its limit, and per unit.
import type { Unit } from '../config';
import type { DescriptorStatus, HeaderValue } from './types';

export interface HeaderSettings {
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
export function limitHeaders(status: DescriptorStatus, names: HeaderSettings): HeaderValue[] {
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
export function perUnitHeaders(
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
