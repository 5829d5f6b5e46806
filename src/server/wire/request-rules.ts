// Validation shared by every decoder of RateLimitRequest (protobuf objects, raw bytes, JSON),
// so that each refuses the same things with the same words.
import { parseUnit, type Unit } from '../../config';
import { RequestError } from '../../engine';

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
