// StoreError: the one error type every counter backend reports.
import type { BackendName } from './counter-store';

/** A backend failure; `isTransient` is true when retrying later may succeed (connection, timeout). */
export class StoreError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly backend: BackendName,
    message: string,
    readonly isTransient: boolean,
    options?: { cause?: unknown },
  ) {
    super(`${backend} backend: ${message}`, options);
    this.name = 'StoreError';
  }
}
