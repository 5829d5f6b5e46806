// Bounded polling for conditions that become true in another process; tests never sleep blindly.

/** Retries `check` until it stops throwing (or returns true) or `timeoutMs` passes. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (result !== false) return result;
      lastError = new Error('condition is false');
    } catch (err: unknown) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? lastError.message : String(lastError);
      throw new Error(
        `timed out waiting${options.what === undefined ? '' : ` for ${options.what}`}: ${reason}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 25));
  }
}
