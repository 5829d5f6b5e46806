// A CounterStore wrapper that puts a CLIENT span around each round trip to the backend, for
// every algorithm's calls; createStore adds it when it is given a tracer.
import { context, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  ATTR_DB_OPERATION_BATCH_SIZE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
} from '@opentelemetry/semantic-conventions';
import { describeError } from '../lib/errors';
import { isPromise, type Pending } from '../lib/pending';
import type {
  CounterIncrement,
  CounterRead,
  CounterStore,
  SlidingWindowChange,
  TokenBucketChange,
} from './counter-store';

/** The db.system.name of each backend; the in-process store is no database and has none. */
const DB_SYSTEM: Readonly<Record<CounterStore['backend'], string | undefined>> = {
  redis: 'redis',
  memcache: 'memcached',
  memory: undefined,
};

/**
 * Wraps `store` so that every increment and read is a child span of the call that caused it
 * (the engine runs inside the call's span). Only made when tracing is on: with it off the
 * engine holds the store itself.
 */
export function tracedStore(store: CounterStore, tracer: Tracer): CounterStore {
  const system = DB_SYSTEM[store.backend];
  const around = <T>(operation: string, size: number, work: () => Pending<T>): Pending<T> => {
    // Outside a sampled call there is nothing to be a child of (CallSpan.within sets no context
    // for an unsampled call), and a child would not be sampled either.
    const active = context.active();
    if (trace.getSpan(active)?.isRecording() !== true) return work();
    const span = tracer.startSpan(
      `${store.backend} ${operation}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR_DB_OPERATION_NAME]: operation,
          [ATTR_DB_OPERATION_BATCH_SIZE]: size,
          'ratelimit.backend': store.backend,
          ...(system === undefined ? {} : { [ATTR_DB_SYSTEM_NAME]: system }),
        },
      },
      active,
    );
    const failed = (err: unknown): never => {
      if (err instanceof Error) span.recordException(err);
      span.setStatus({ code: SpanStatusCode.ERROR, message: describeError(err) });
      span.end();
      throw err;
    };
    let answer: Pending<T>;
    try {
      answer = work();
    } catch (err: unknown) {
      return failed(err);
    }
    if (!isPromise(answer)) {
      span.end();
      return answer;
    }
    return answer.then((result) => {
      span.end();
      return result;
    }, failed);
  };
  return {
    backend: store.backend,
    unsupported: store.unsupported,
    increment: (batch: readonly CounterIncrement[]) =>
      around('increment', batch.length, () => store.increment(batch)),
    read: (keys: readonly CounterRead[]) => around('read', keys.length, () => store.read(keys)),
    slidingWindow: (batch: readonly SlidingWindowChange[]) =>
      around('sliding_window', batch.length, () => store.slidingWindow(batch)),
    tokenBucket: (batch: readonly TokenBucketChange[]) =>
      around('token_bucket', batch.length, () => store.tokenBucket(batch)),
    isConnected: () => store.isConnected(),
    onConnectionChange: (listener) => {
      store.onConnectionChange(listener);
    },
    close: () => store.close(),
  };
}
