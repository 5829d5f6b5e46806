// Time windows of each unit: where a window starts, how long it lasts, when it resets.
import { UNIT_SECONDS, type Unit } from '../config';

export interface Window {
  /** Unix seconds at which the window started; part of the cache key. */
  readonly startSeconds: number;
  /** Length of the window in seconds; the base of the key's expiry. */
  readonly lengthSeconds: number;
  /** Whole seconds until the next window. */
  readonly resetSeconds: number;
}

/**
 * The window containing `nowSeconds`. Fixed units count from the epoch; with calendar months
 * a MONTH window is the calendar month in UTC.
 */
export function windowOf(unit: Unit, nowSeconds: number, useCalendarMonth: boolean): Window {
  if (unit === 'MONTH' && useCalendarMonth) {
    const now = new Date(nowSeconds * 1000);
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
    return { startSeconds: start, lengthSeconds: next - start, resetSeconds: next - nowSeconds };
  }
  const length = UNIT_SECONDS[unit];
  const into = nowSeconds % length;
  return { startSeconds: nowSeconds - into, lengthSeconds: length, resetSeconds: length - into };
}
