// A value now or a promise of it: what counting returns, so a store that needs no I/O (memory)
// answers in the calling turn without a promise, and the one helper that continues either.

/** A value, or a promise of one. */
export type Pending<T> = T | Promise<T>;

/**
 * Whether `value` is still to come. Every promise on the request path is made in this process's
 * realm (the drivers' and ours), so `instanceof` is enough and costs a value almost nothing.
 */
export function isPromise<T>(value: Pending<T>): value is Promise<T> {
  return value instanceof Promise;
}

/**
 * `next(value)`: at once for a value, when it resolves for a promise (one `then`, one promise
 * more). A rejection passes on; for a value, what `next` throws is thrown in the calling turn.
 */
export function andThen<T, R>(value: Pending<T>, next: (value: T) => Pending<R>): Pending<R> {
  return isPromise(value) ? value.then(next) : next(value);
}
