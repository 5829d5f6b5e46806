// The message of anything thrown, for logs and error texts.

/**
 * The message of an error, or the text of a non-error. Checks the shape rather than
 * `instanceof Error`, which fails for errors made in another realm (vm contexts, jest).
 */
export function describeError(err: unknown): string {
  if (
    typeof err === 'object' &&
    err !== null &&
    'message' in err &&
    typeof err.message === 'string'
  )
    return err.message;
  return String(err);
}
