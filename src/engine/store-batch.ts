// The count step: every check's changes of one request, sent to the store together.
import { andThen, isPromise, type Pending } from '../lib/pending';
import type {
  CounterIncrement,
  CounterStore,
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

/** A batch of increments only: the usual request, whatever its algorithm. */
function incrementsOnly(values: readonly number[]): StoreResults {
  return { increments: values, slidingWindows: NONE, tokenBuckets: NONE };
}

function slidingWindowsOnly(values: readonly SlidingWindowCounts[]): StoreResults {
  return { increments: NONE, slidingWindows: values, tokenBuckets: NONE };
}

function tokenBucketsOnly(values: readonly TokenBucketState[]): StoreResults {
  return { increments: NONE, slidingWindows: NONE, tokenBuckets: values };
}

/**
 * Sends the batch: the store's answers now when it needs no I/O, else a promise of them. The
 * store's calls start in the same turn, so a pipelining backend writes them in one round trip;
 * a request of one kind (the usual one) makes one call and no Promise.all.
 */
export function sendBatch(store: CounterStore, batch: StoreBatch): Pending<StoreResults> {
  const { increments, slidingWindows, tokenBuckets } = batch;
  const hasIncrements = increments.length > 0;
  const hasSliding = slidingWindows.length > 0;
  const hasBuckets = tokenBuckets.length > 0;
  if (!hasSliding && !hasBuckets) {
    return hasIncrements ? andThen(store.increment(increments), incrementsOnly) : NO_RESULTS;
  }
  if (!hasIncrements && !hasBuckets) {
    return andThen(store.slidingWindow(slidingWindows), slidingWindowsOnly);
  }
  if (!hasIncrements && !hasSliding) {
    return andThen(store.tokenBucket(tokenBuckets), tokenBucketsOnly);
  }
  const i = hasIncrements ? store.increment(increments) : NONE;
  const s = hasSliding ? store.slidingWindow(slidingWindows) : NONE;
  const t = hasBuckets ? store.tokenBucket(tokenBuckets) : NONE;
  if (!isPromise(i) && !isPromise(s) && !isPromise(t)) {
    return { increments: i, slidingWindows: s, tokenBuckets: t };
  }
  return Promise.all([i, s, t]).then(([increments, slidingWindows, tokenBuckets]) => ({
    increments,
    slidingWindows,
    tokenBuckets,
  }));
}
