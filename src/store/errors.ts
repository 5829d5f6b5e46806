// StoreError: the one error type every counter backend reports.
import { BackendError, type BackendErrorOptions } from '../lib/backend-error';
import type { BackendName } from './counter-store';

/**
 * A backend failure; `isTransient` is true when retrying later may succeed (connection, timeout).
 * The engine and the front ends know it as its base, lib's BackendError.
 */
export class StoreError extends BackendError {
  declare readonly backend: BackendName;
  constructor(
    backend: BackendName,
    message: string,
    isTransient: boolean,
    options?: BackendErrorOptions,
  ) {
    super(backend, message, isTransient, options);
    this.name = 'StoreError';
  }
}
