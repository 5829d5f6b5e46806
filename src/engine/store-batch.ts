// The count step: every check's changes of one request, sent to the store together.
import type {
  CounterIncrement,
  CounterStore,
  ImmediateCounts,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../store';

/** The changes of one request, by kind; a check remembers where it put its own. */
export class StoreBatch {
  readonly increments: CounterIncrement[] = [];
  readonly slidingWindows: SlidingWindowChange[] = [];
  readonly tokenBuckets: TokenBucketChange[] = [];

  constructor(
    /** Seconds added to a key's expiry, below EXPIRATION_JITTER_MAX_SECONDS. */
    readonly ttlJitterSeconds: () => number,
  ) {}
}

/** The store's answers, in the order of the batch's lists. */
export interface StoreResults {
  readonly increments: readonly number[];
  readonly slidingWindows: readonly SlidingWindowCounts[];
  readonly tokenBuckets: readonly TokenBucketState[];
}

const NONE: readonly never[] = Object.freeze([]);
export const NO_RESULTS: StoreResults = Object.freeze({
  increments: NONE,
  slidingWindows: NONE,
  tokenBuckets: NONE,
});

/**
 * Sends the batch. The store's calls start in the same turn, so a pipelining backend writes
 * them in one round trip; a request with fixed windows only makes one call, as before.
 */
export async function sendBatch(store: CounterStore, batch: StoreBatch): Promise<StoreResults> {
  const { increments, slidingWindows, tokenBuckets } = batch;
  const hasIncrements = increments.length > 0;
  const hasSliding = slidingWindows.length > 0;
  const hasBuckets = tokenBuckets.length > 0;
  // One kind (the usual request, whatever its algorithm): one await, no Promise.all.
  if (!hasSliding && !hasBuckets) {
    return hasIncrements
      ? { increments: await store.increment(increments), slidingWindows: NONE, tokenBuckets: NONE }
      : NO_RESULTS;
  }
  if (!hasIncrements && !hasBuckets) {
    return {
      increments: NONE,
      slidingWindows: await store.slidingWindow(slidingWindows),
      tokenBuckets: NONE,
    };
  }
  if (!hasIncrements && !hasSliding) {
    return {
      increments: NONE,
      slidingWindows: NONE,
      tokenBuckets: await store.tokenBucket(tokenBuckets),
    };
  }
  const [i, s, t] = await Promise.all([
    hasIncrements ? store.increment(increments) : NONE,
    hasSliding ? store.slidingWindow(slidingWindows) : NONE,
    hasBuckets ? store.tokenBucket(tokenBuckets) : NONE,
  ]);
  return { increments: i, slidingWindows: s, tokenBuckets: t };
}

/** sendBatch on a store that answers in the calling turn. */
export function sendBatchNow(store: ImmediateCounts, batch: StoreBatch): StoreResults {
  const { increments, slidingWindows, tokenBuckets } = batch;
  return {
    increments: increments.length === 0 ? NONE : store.increment(increments),
    slidingWindows: slidingWindows.length === 0 ? NONE : store.slidingWindow(slidingWindows),
    tokenBuckets: tokenBuckets.length === 0 ? NONE : store.tokenBucket(tokenBuckets),
  };
}
