// Validation shared by every decoder of RateLimitRequest (protobuf objects, raw bytes, JSON),
// so that each refuses the same things with the same words.
import { parseUnit, type Unit } from '../../config';
import { RequestError, type RateLimitRequest } from '../../engine';
import type { RequestLimits } from '../../settings';

/** envoy.type.v3.RateLimitUnit numbers (no WEEK in this enum). */
const OVERRIDE_UNITS: readonly (Unit | undefined)[] = [
  undefined,
  'SECOND',
  'MINUTE',
  'HOUR',
  'DAY',
  'MONTH',
  'YEAR',
];

export function badRequest(message: string): RequestError {
  return new RequestError('BAD_REQUEST', message);
}

/** A descriptor's limit override unit, by enum number or name. */
export function overrideUnit(unit: unknown, index: number): Unit {
  let parsed: Unit | undefined;
  if (typeof unit === 'number') parsed = OVERRIDE_UNITS[unit];
  else if (typeof unit === 'string') parsed = unit === 'WEEK' ? undefined : parseUnit(unit);
  if (parsed === undefined) {
    throw badRequest(
      `descriptors[${index}].limit.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR`,
    );
  }
  return parsed;
}

/** A whole number within [0, max], also from a decimal string (64-bit values in JSON). */
export function wholeNumber(value: unknown, what: string, max: number): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) {
    throw badRequest(`${what} must be a whole number from 0 to ${max}`);
  }
  return n;
}

/** The refusals of the request limits, worded once for every decoder. */
export const tooMany = {
  descriptors: (limits: RequestLimits): RequestError =>
    badRequest(
      `the request has more than ${limits.maxDescriptors} descriptors (MAX_DESCRIPTORS_PER_REQUEST)`,
    ),
  entries: (limits: RequestLimits, index: number): RequestError =>
    badRequest(
      `descriptors[${index}] has more than ${limits.maxEntries} entries (MAX_ENTRIES_PER_DESCRIPTOR)`,
    ),
  keyBytes: (limits: RequestLimits, what: string): RequestError =>
    badRequest(`${what} is longer than ${limits.maxKeyBytes} bytes (MAX_DESCRIPTOR_KEY_BYTES)`),
  valueBytes: (limits: RequestLimits, what: string): RequestError =>
    badRequest(`${what} is longer than ${limits.maxValueBytes} bytes (MAX_DESCRIPTOR_VALUE_BYTES)`),
};

/** UTF-8 bytes of `text` above `max`; counts bytes only when the length cannot tell. */
function isLongerThan(text: string, max: number): boolean {
  // UTF-8 takes at least one byte and at most three per UTF-16 unit.
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return Buffer.byteLength(text, 'utf8') > max;
}

/**
 * Refuses a decoded request past the request limits (the byte decoder checks the same as it
 * reads, before building anything large).
 */
export function checkRequestLimits(request: RateLimitRequest, limits: RequestLimits): void {
  if (isLongerThan(request.domain, limits.maxKeyBytes)) throw tooMany.keyBytes(limits, 'domain');
  if (request.descriptors.length > limits.maxDescriptors) throw tooMany.descriptors(limits);
  request.descriptors.forEach((d, i) => {
    if (d.entries.length > limits.maxEntries) throw tooMany.entries(limits, i);
    d.entries.forEach((e, j) => {
      if (isLongerThan(e.key, limits.maxKeyBytes))
        throw tooMany.keyBytes(limits, `descriptors[${i}].entries[${j}].key`);
      if (isLongerThan(e.value, limits.maxValueBytes))
        throw tooMany.valueBytes(limits, `descriptors[${i}].entries[${j}].value`);
    });
  });
}
