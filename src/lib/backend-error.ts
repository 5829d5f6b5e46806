// BackendError: a shared backend's failure, defined below every room so the engine and the
// front ends recognise it by class without importing the store (.dependency-cruiser.cjs).

/**
 * A backend failure; `isTransient` is true when retrying later may succeed (connection,
 * timeout). The store's StoreError is the one subclass; recognise it with `instanceof`.
 */
export class BackendError extends Error {
  /** The stable code HTTP bodies and logs carry. */
  readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly backend: string,
    message: string,
    readonly isTransient: boolean,
    options?: { cause?: unknown },
  ) {
    super(`${backend} backend: ${message}`, options);
    this.name = 'BackendError';
  }
}
