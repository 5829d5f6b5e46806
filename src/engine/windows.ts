// Time windows of each unit: where a window starts, how long its key lives, when it resets.
import { UNIT_SECONDS, type Unit } from '../config';

export interface Window {
  /** Unix seconds at which the window started; part of the cache key. */
  readonly startSeconds: number;
  /**
   * Seconds the key must live from now, before the jitter: a whole window length for fixed
   * windows (as the reference sets it), the rest of the month for calendar months.
   */
  readonly expirySeconds: number;
  /** Whole seconds until the next window. */
  readonly resetSeconds: number;
}

/**
 * The window containing `nowSeconds`. Fixed units count from the epoch; with calendar months
 * a MONTH window is the calendar month in UTC, and its bucket, expiry and reset all follow it
 * (docs/compat.md, "Windows and reset").
 */
export function windowOf(unit: Unit, nowSeconds: number, useCalendarMonth: boolean): Window {
  if (unit === 'MONTH' && useCalendarMonth) {
    const now = new Date(nowSeconds * 1000);
    const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
    const rest = next - nowSeconds;
    return { startSeconds: start, expirySeconds: rest, resetSeconds: rest };
  }
  const length = UNIT_SECONDS[unit];
  const into = nowSeconds % length;
  return { startSeconds: nowSeconds - into, expirySeconds: length, resetSeconds: length - into };
}
