// The package scripts that start servers (`npm run demo`, `npm run sim`, `npm start`) stop
// everything they started within 2 s of SIGINT or SIGTERM sent to npm's own process id, as a
// process manager or `kill <pid>` sends it, and leave their ports free. npm passes the signal
// to the child it ran, the `sh -c` of the script: a shell does not pass it on to the program it
// waits for, so each script must leave no shell in between.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { LOOPBACK_LISTENERS, loggedPorts } from '../helpers/ports';

const ROOT = path.resolve(__dirname, '..', '..');
const cleanup = collectCleanups();
const STOP_WITHIN_MS = 2000;
const SIM_SERVING = /over ADS on \S+:(\d+)\b.*; admin on http:\/\/\S+:(\d+)/;

/** Every server on loopback ports the system picks; each reports what it bound. */
const ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  ...LOOPBACK_LISTENERS,
  BACKEND_TYPE: 'memory',
  USE_STATSD: 'false',
  // What `npm run demo` sets by default, for `npm start`, which reads only the environment.
  RUNTIME_ROOT: path.join(ROOT, 'examples'),
  RUNTIME_SUBDIRECTORY: 'ratelimit',
  RUNTIME_WATCH_ROOT: 'false',
  LOG_LEVEL: 'info',
  SIM_PORT: '0',
  SIM_ADMIN_PORT: '0',
};

interface Started {
  readonly npm: ChildProcess;
  readonly ports: readonly number[];
  output(): string;
}

/** The ports a script's server logged: the service's three listeners, or the simulator's two. */
function boundPorts(output: string): number[] | undefined {
  const sim = SIM_SERVING.exec(output);
  if (sim !== null) return [Number(sim[1]), Number(sim[2])];
  const { http, grpc, debug } = loggedPorts(output);
  return http === undefined || grpc === undefined || debug === undefined
    ? undefined
    : [http, grpc, debug];
}

/** `npm run <script>` in a process group of its own, so a failed test can still end all of it. */
async function startScript(script: string): Promise<Started> {
  const npm = spawn('npm', ['run', script], {
    cwd: ROOT,
    env: ENV,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (c: Buffer) => (output += c.toString()));
  npm.stderr.on('data', (c: Buffer) => (output += c.toString()));
  cleanup(() => {
    try {
      process.kill(-(npm.pid ?? 0), 'SIGKILL');
    } catch {
      // The group is gone: the test's own assertion has already passed.
    }
  });
  const ports = await eventually(
    (): number[] => {
      if (npm.exitCode !== null) throw new Error(`npm run ${script} exited:\n${output}`);
      const bound = boundPorts(output);
      if (bound === undefined) throw new Error(`npm run ${script} has not said where it listens`);
      return bound;
    },
    { what: `npm run ${script} to listen`, timeoutMs: 30_000 },
  );
  return { npm, ports, output: () => output };
}

/** Each live process's parent, read from /proc (Linux). */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const state = processState(Number(entry));
    if (state !== undefined) map.set(Number(entry), state.ppid);
  }
  return map;
}

/** A process's state letter and parent, or undefined once it is gone. */
function processState(pid: number): { state: string; ppid: number } | undefined {
  try {
    // The command name, field 2, is in parentheses and may hold spaces: fields after it follow.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** `pid` and every process under it. */
function tree(pid: number): number[] {
  const byParent = parents();
  const found = [pid];
  for (let i = 0; i < found.length; i++)
    for (const [child, parent] of byParent) if (parent === found[i]) found.push(child);
  return found;
}

/** Running, or stopped but holding what it had: a zombie holds no port and runs nothing. */
function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state.state !== 'Z';
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => {
      resolve(false);
    });
    probe.listen(port, '127.0.0.1', () => {
      probe.close(() => {
        resolve(true);
      });
    });
  });
}

describe.each([
  ['demo', 'SIGINT'],
  ['demo', 'SIGTERM'],
  ['sim', 'SIGINT'],
  ['sim', 'SIGTERM'],
  ['start', 'SIGTERM'],
] as const)('npm run %s, then %s to npm', (script, signal) => {
  it(`stops every process it started within ${STOP_WITHIN_MS} ms and frees its ports`, async () => {
    const started = await startScript(script);
    const pids = tree(started.npm.pid ?? 0);
    // npm and the server it runs (and whatever that started) are all there before the signal.
    expect(pids.length).toBeGreaterThanOrEqual(2);
    const sentAt = Date.now();
    process.kill(started.npm.pid ?? 0, signal);
    await eventually(
      async () => {
        const running = pids.filter(isRunning);
        if (running.length > 0) throw new Error(`still running: ${running.join(', ')}`);
        const taken = [];
        for (const port of started.ports) if (!(await isFree(port))) taken.push(port);
        if (taken.length > 0) throw new Error(`ports still taken: ${taken.join(', ')}`);
        return true;
      },
      { what: `npm run ${script} to stop on ${signal}`, timeoutMs: STOP_WITHIN_MS },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\noutput:\n${started.output()}`);
    });
    expect(Date.now() - sentAt).toBeLessThanOrEqual(STOP_WITHIN_MS + 500);
  });
});
