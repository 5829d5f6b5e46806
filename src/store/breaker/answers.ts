// What an open breaker answers in each BACKEND_FAILURE_MODE, in the store's own terms.
import type { BreakerMode } from '../../settings';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { StoreError } from '../errors';

/** The answers of one mode for each store call; `error` rejects, the others resolve. */
export interface OpenAnswers {
  increment(batch: readonly CounterIncrement[]): Promise<number[]>;
  read(keys: readonly CounterRead[]): Promise<number[]>;
  slidingWindow(batch: readonly SlidingWindowChange[]): Promise<SlidingWindowCounts[]>;
  tokenBucket(batch: readonly TokenBucketChange[]): Promise<TokenBucketState[]>;
}

/** Nothing counted, everything admitted: the requests go through (`allow`). */
const ALLOW: OpenAnswers = {
  increment: (batch) => Promise.resolve(batch.map(() => 0)),
  read: (keys) => Promise.resolve(keys.map(() => 0)),
  slidingWindow: (batch) => Promise.resolve(batch.map(() => ({ previous: 0, current: 0 }))),
  tokenBucket: (batch) => Promise.resolve(batch.map(() => ({ isAdmitted: true, tatUs: 0 }))),
};

/**
 * Over every limit (`deny`). Infinity is the seam's answer that is not a count: the engine
 * refuses, and its local over-limit cache does not remember the key, so nothing is refused
 * once the backend is back.
 */
const DENY: OpenAnswers = {
  increment: (batch) => Promise.resolve(batch.map(() => Infinity)),
  read: (keys) => Promise.resolve(keys.map(() => Infinity)),
  slidingWindow: (batch) => Promise.resolve(batch.map(() => ({ previous: 0, current: Infinity }))),
  tokenBucket: (batch) =>
    Promise.resolve(batch.map(() => ({ isAdmitted: false, tatUs: Infinity }))),
};

/** The answers of `mode`; `local` is answered by the in-process store given. */
export function openAnswers(
  mode: BreakerMode,
  backend: CounterStore['backend'],
  instance: string,
  local: OpenAnswers | undefined,
): OpenAnswers {
  if (mode === 'allow') return ALLOW;
  if (mode === 'deny') return DENY;
  if (mode === 'local' && local !== undefined) return local;
  const refuse = (): Promise<never> =>
    Promise.reject(
      new StoreError(
        backend,
        `the circuit breaker of ${instance} is open: not waiting for it`,
        true,
      ),
    );
  return { increment: refuse, read: refuse, slidingWindow: refuse, tokenBucket: refuse };
}
