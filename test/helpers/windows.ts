// Helpers for tests against real time: runs that must stay inside one rate limit window.

/** The window start (Unix seconds) of a unit length at this moment. */
export function windowStart(lengthSeconds: number): number {
  const now = Math.floor(Date.now() / 1000);
  return now - (now % lengthSeconds);
}

/**
 * Runs `attempt` (with a fresh attempt number for fresh keys) until one run starts and ends in
 * the same window, at most 3 times. A window boundary in the middle would split the counts.
 */
export async function inOneWindow<T>(
  lengthSeconds: number,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  let lastError: unknown;
  for (let n = 1; n <= 3; n++) {
    const before = windowStart(lengthSeconds);
    try {
      const result = await attempt(n);
      if (windowStart(lengthSeconds) === before) return result;
      lastError = new Error('the window changed during the run');
    } catch (err: unknown) {
      if (windowStart(lengthSeconds) === before) throw err;
      lastError = err;
    }
  }
  throw lastError;
}
