// Things a test file started, stopped in reverse order after its last test.

export type Cleanup = () => Promise<void> | void;

/** Registers an afterAll that runs every added cleanup, last added first. */
export function collectCleanups(): (cleanup: Cleanup) => void {
  const cleanups: Cleanup[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  return (cleanup) => {
    cleanups.push(cleanup);
  };
}
