// Ending a child process the tests started: by its id, and waiting until it has exited.
import { spawn, type ChildProcess } from 'node:child_process';
import { missingProgram } from './programs';

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

/** A server process the tests started: its output so far, and when it has closed. */
export interface SpawnedServer {
  readonly child: ChildProcess;
  output(): string;
  readonly closed: Promise<void>;
}

/**
 * Starts `command` with its output captured; resolves once it has spawned, or rejects saying
 * the program is missing (`.ci/run` installs the servers the tests use).
 */
export async function spawnServer(
  command: string,
  args: readonly string[],
): Promise<SpawnedServer> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = new Promise<void>((resolve) => {
    child.once('close', () => {
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => {
      reject(missingProgram(command, err.message));
    });
  });
  return { child, output: () => output, closed };
}
