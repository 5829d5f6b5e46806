// Which failures the engine counts as redis_error and which as service_error.
import { RequestError } from '../../../src/engine';
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore, StoreError, type CounterStore } from '../../../src/store';
import { descriptor, engineOf } from '../../helpers/engine';

const CONFIG =
  'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n';
const REDIS_ERROR = 'ratelimit.service.call.should_rate_limit.redis_error';
const SERVICE_ERROR = 'ratelimit.service.call.should_rate_limit.service_error';

/** A backend that fails every call with `error`: an outage on demand, without a server to stop. */
function failingStore(error: Error): CounterStore {
  return {
    backend: 'redis',
    increment: () => Promise.reject(error),
    read: () => Promise.reject(error),
    slidingWindow: () => Promise.reject(error),
    tokenBucket: () => Promise.reject(error),
    unsupported: {},
    isConnected: () => false,
    onConnectionChange: () => undefined,
    close: () => Promise.resolve(),
  };
}

async function countsFor(
  error: Error,
): Promise<{ redis: number; service: number; thrown: unknown }> {
  const { engine, stats } = engineOf(failingStore(error), new ManualClock(0), [CONFIG]);
  const thrown = await Promise.resolve(
    engine.shouldRateLimit({ domain: 'd', descriptors: [descriptor([['k', 'v']])], hitsAddend: 0 }),
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  const counters = stats.snapshot().counters;
  return {
    redis: counters.get(REDIS_ERROR) ?? 0,
    service: counters.get(SERVICE_ERROR) ?? 0,
    thrown,
  };
}

it('counts a StoreError as redis_error and passes it on', async () => {
  const error = new StoreError('redis', 'connect ECONNREFUSED', true);
  expect(await countsFor(error)).toEqual({ redis: 1, service: 0, thrown: error });
});

it('counts neither for an error that is no backend failure', async () => {
  const error = new TypeError('a bug');
  expect(await countsFor(error)).toEqual({ redis: 0, service: 0, thrown: error });
});

it('counts a request the service cannot answer as service_error', () => {
  const { engine, stats } = engineOf(failingStore(new Error('unused')), new ManualClock(0), [
    CONFIG,
  ]);
  // Refused before the store is asked: in the calling turn, whatever the store.
  expect(() => engine.shouldRateLimit({ domain: '', descriptors: [], hitsAddend: 0 })).toThrow(
    RequestError,
  );
  expect(stats.snapshot().counters.get(SERVICE_ERROR)).toBe(1);
});

describe('one decision path', () => {
  const request = { domain: 'd', descriptors: [descriptor([['k', 'v']])], hitsAddend: 0 };

  it('answers in the calling turn, with no promise, when the store needs no I/O', () => {
    const clock = new ManualClock(0);
    const { engine } = engineOf(new MemoryCounterStore({ clock }), clock, [CONFIG]);
    const answer = engine.shouldRateLimit(request);
    expect(answer).not.toBeInstanceOf(Promise);
    expect((answer as { overallCode: string }).overallCode).toBe('OK');
  });

  it('answers with a promise when the store does, and counts its rejection', async () => {
    const error = new StoreError('redis', 'unreachable', true);
    const { engine, stats } = engineOf(failingStore(error), new ManualClock(0), [CONFIG]);
    const answer = engine.shouldRateLimit(request);
    expect(answer).toBeInstanceOf(Promise);
    await expect(answer).rejects.toBe(error);
    expect(stats.snapshot().counters.get(REDIS_ERROR)).toBe(1);
  });

  it('counts a store that fails in the calling turn as one that rejects', () => {
    const error = new StoreError('memory', 'broken', false);
    const store = new MemoryCounterStore({ clock: new ManualClock(0) });
    store.increment = () => {
      throw error;
    };
    const { engine, stats } = engineOf(store, new ManualClock(0), [CONFIG]);
    expect(() => engine.shouldRateLimit(request)).toThrow(error);
    expect(stats.snapshot().counters.get(REDIS_ERROR)).toBe(1);
  });
});
