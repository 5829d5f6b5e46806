// Processes of the bench: started pinned to cores when taskset exists, measured from /proc,
// stopped by their own process id.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';

export const HAS_TASKSET = (() => {
  try {
    execFileSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
  } catch {
    return 100;
  }
})();

/**
 * Which cores each party gets. With four or more, the server has its own (two for the
 * WORKERS=2 runs) and the load generator and Redis one each; with two or three, the load
 * generator and Redis share the core the server does not use.
 */
export interface CoreLayout {
  readonly server: string;
  readonly load: string;
  readonly redis: string;
}

export function coreLayout(): CoreLayout {
  const cores = os.availableParallelism();
  if (cores >= 4) return { server: '0', load: String(cores - 2), redis: String(cores - 1) };
  if (cores >= 2) return { server: '0', load: '1', redis: '1' };
  return { server: '0', load: '0', redis: '0' };
}

/**
 * The cores of a service with `workers` workers: one each while the machine has two more for
 * the load generator and Redis (the last two), otherwise every core but those (or all of them
 * on a machine with fewer than four).
 */
export function serverCores(workers: number): string {
  const cores = os.availableParallelism();
  if (cores < 4) return Array.from({ length: cores }, (_, i) => i).join(',');
  const count = Math.min(workers, cores - 2);
  return Array.from({ length: count }, (_, i) => i).join(',');
}

/** Spawns a command on the given cores (a taskset list) when taskset exists. */
export function pinned(
  cores: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  return HAS_TASKSET
    ? spawn('taskset', ['-c', cores, command, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => {
      resolve(false);
    });
  });
}

/** Polls `check` every 50 ms; bounded by `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  what: () => string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Process ids whose parent is `pid` (the workers of a supervisor). */
export function childrenOf(pid: number | undefined): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid)
        out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** CPU seconds (user and system) a process has used. */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Peak resident memory of a process in MiB. */
export function peakRssMiB(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) / 1024;
  } catch {
    return 0;
  }
}

/** Ends a process this bench started, by its id, and waits for it. */
export function stop(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  return new Promise((resolve) => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => {
      resolve();
    });
    child.kill(signal);
  });
}

/** Collects a child's output, for error messages. */
export function captureOutput(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  return () => output;
}
