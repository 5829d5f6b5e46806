// How long a usage report covered, from what the client says and when this replica received it:
// Envoy counts time_elapsed in whole seconds (truncated), which overstates a rate by up to a
// second's worth, and one report must not claim more time than can have passed.

/** The longest interval a report is taken to cover (a longer claim counts as this long). */
export const MAX_COUNTED_INTERVAL_MS = 600_000;

/** Truncation to whole seconds loses less than this. */
const TRUNCATION_MS = 1000;

/**
 * The time a report covered, in milliseconds; undefined for a watch (the first report of a
 * bucket on a stream, with a time_elapsed of 0: Envoy's report of a bucket it just made).
 *
 * After an earlier report of the same bucket on the same stream, the gap between their
 * receive times is what passed; Envoy's truncated seconds say it was at least `reportedMs` and
 * under a second more, so the gap is held within that range (network jitter moves it by
 * milliseconds). A claim the gap contradicts by more than a second is not believed: the gap is
 * taken. A first report (after a reconnect Envoy's first carries its tick's time) is taken at
 * its word. Never more than MAX_COUNTED_INTERVAL_MS.
 */
export function coveredMs(reportedMs: number, gapMs: number | undefined): number | undefined {
  if (gapMs === undefined) {
    if (reportedMs <= 0) return undefined;
    return Math.min(reportedMs, MAX_COUNTED_INTERVAL_MS);
  }
  const low = reportedMs;
  const high = reportedMs + TRUNCATION_MS;
  const isBelievable = gapMs >= low - TRUNCATION_MS && gapMs <= high + TRUNCATION_MS;
  const covered = isBelievable ? Math.min(Math.max(gapMs, low), high) : gapMs;
  return Math.min(Math.max(0, covered), MAX_COUNTED_INTERVAL_MS);
}
