// The memcached the memcached scenarios count in, started beside the bench's redis-server.
import type { ChildProcess } from 'node:child_process';
import { canConnect, captureOutput, freePort, pinned, waitFor } from './processes';

export interface BenchBackend {
  readonly port: number;
  readonly pid: number | undefined;
  readonly child: ChildProcess;
}

/** memcached on a free loopback port, one worker thread, pinned to `core`. */
export async function startMemcached(core: string): Promise<BenchBackend> {
  const port = await freePort();
  const args = ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-t', '1', '-m', '256'];
  // memcached refuses to run as root unless told which user to be.
  if (process.getuid?.() === 0) args.push('-u', 'root');
  const child = pinned(core, 'memcached', args);
  const output = captureOutput(child);
  await waitFor(
    () => canConnect(port),
    () => `memcached (is it installed?):\n${output()}`,
  );
  return { port, pid: child.pid, child };
}
