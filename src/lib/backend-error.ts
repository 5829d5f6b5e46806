// BackendError: a shared backend's failure, defined below every room so the engine and the
// front ends recognise it by class without importing the store (.dependency-cruiser.cjs).

export interface BackendErrorOptions {
  readonly cause?: unknown;
  /**
   * The address of the server that could not be reached; the message then reads
   * `<backend> backend unreachable (<address>): <reason>`.
   */
  readonly unreachable?: string;
}

/**
 * A backend failure; `isTransient` is true when retrying later may succeed (connection,
 * timeout). The store's StoreError is the one subclass; recognise it with `instanceof`. Its
 * message is in the operator's words (`redis backend unreachable (10.0.0.7:6379): connection
 * refused`), never a driver's internal sentence, since callers and logs show it as it is.
 */
export class BackendError extends Error {
  /** The stable code HTTP bodies and logs carry. */
  readonly code = 'STORE_UNAVAILABLE';
  /** The server that could not be reached, when that is the failure. */
  readonly unreachable: string | undefined;
  constructor(
    readonly backend: string,
    /** What went wrong, without the backend's name. */
    readonly reason: string,
    readonly isTransient: boolean,
    options: BackendErrorOptions = {},
  ) {
    super(
      options.unreachable === undefined
        ? `${backend} backend: ${reason}`
        : `${backend} backend unreachable (${options.unreachable}): ${reason}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'BackendError';
    this.unreachable = options.unreachable;
  }
}
