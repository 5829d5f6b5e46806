// Ending a child process the tests started: by its id, and waiting until it has exited.
import type { ChildProcess } from 'node:child_process';

/** SIGKILLs `child` unless it has already exited, and resolves once it has. */
export async function killAndWait(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
    child.kill('SIGKILL');
  });
}
