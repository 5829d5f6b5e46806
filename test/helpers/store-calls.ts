// Small builders for direct CounterStore calls in the backend-specific suites.
import type { Pending } from '../../src/lib/pending';
import { StoreError, type CounterIncrement } from '../../src/store';

/** An increment of `hits` on `key` with a `ttlSeconds` expiry (not per-second, not negative). */
export function inc(key: string, hits = 1, ttlSeconds = 60): CounterIncrement {
  return { key, hits, ttlSeconds, isPerSecond: false, isNegative: false };
}

/** The StoreError `answer` rejects with; throws when it resolves or rejects otherwise. */
export async function rejection(answer: Pending<unknown>): Promise<StoreError> {
  try {
    await answer;
  } catch (err: unknown) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError');
}
