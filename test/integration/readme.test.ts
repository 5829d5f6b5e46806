// The README's own command blocks (Set-up, Try it, the client example, the xDS walkthrough),
// read from README.md and run as written against the built service: each command succeeds and
// prints what the README shows under it. Ports the README names are swapped for the ones the servers bound.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { section } from '../helpers/deploy/readme-commands';
import { eventually } from '../helpers/eventually';
import { loggedPorts } from '../helpers/ports';
import { blocks, matchesShown, withPorts, type Step } from '../helpers/readme-steps';

const ROOT = path.resolve(__dirname, '..', '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const cleanup = collectCleanups();

/** The README's ports: the service's HTTP, gRPC and debug listeners, the simulator's two. */
const SERVICE_PORTS = { http: 8080, grpc: 8081, debug: 6070 } as const;
const SIM_PORTS = { ads: 18000, admin: 18001 };
const SIM_SERVING = /over ADS on \S+:(\d+)\b.*; admin on http:\/\/\S+:(\d+)/;

/** Where the README's ports really are, filled in as servers start. */
const ports = new Map<number, number>();

/** Every server binds loopback ports the system picks; the README's commands are run as written. */
const ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  HOST: '127.0.0.1',
  PORT: '0',
  GRPC_HOST: '127.0.0.1',
  GRPC_PORT: '0',
  DEBUG_HOST: '127.0.0.1',
  DEBUG_PORT: '0',
  SIM_PORT: '0',
  SIM_ADMIN_PORT: '0',
};

function shell(command: string, detached = false): ChildProcess {
  return spawn('/bin/sh', ['-c', command], {
    cwd: ROOT,
    env: ENV,
    detached,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Starts a long-running command (a server) in its own process group, stopped after the file. */
async function startServer(command: string): Promise<void> {
  const child = shell(command, true);
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  cleanup(
    () =>
      new Promise<void>((resolve) => {
        const pid = child.pid;
        if (pid === undefined) {
          resolve();
          return;
        }
        const hasExited = child.exitCode !== null || child.signalCode !== null;
        if (!hasExited)
          child.once('exit', () => {
            resolve();
          });
        // The group this test created: npm and the node process it started, even if npm is gone.
        try {
          process.kill(-pid, 'SIGTERM');
        } catch {
          // Nothing of the group is left.
        }
        if (hasExited) resolve();
      }),
  );
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`${command} exited:\n${output}`);
      const sim = SIM_SERVING.exec(output);
      if (sim !== null) {
        ports.set(SIM_PORTS.ads, Number(sim[1])).set(SIM_PORTS.admin, Number(sim[2]));
        return true;
      }
      const bound = loggedPorts(output);
      if (bound.http === undefined || bound.grpc === undefined || bound.debug === undefined)
        throw new Error(`${command} has not said where it listens:\n${output}`);
      for (const name of ['http', 'grpc', 'debug'] as const)
        ports.set(SERVICE_PORTS[name], bound[name] as number);
      return true;
    },
    { what: `${command} to listen`, timeoutMs: 30_000 },
  );
}

function run(command: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = shell(command);
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => {
      resolve({ code, output });
    });
  });
}

/** A command that only reads (a GET with curl): running it again changes nothing. */
const isRead = (command: string): boolean =>
  /^curl\b/.test(command) && !/\s(-X\s*POST|-d)\s/.test(command);

/**
 * Runs a step; one that only reads is run again until it prints what the README shows, for up
 * to 10 s, as a person typing it gives the service that long to catch up (an ACK, a NACK).
 * Any other runs once, since a second run would count again.
 */
async function runStep(step: Step): Promise<string> {
  const command = withPorts(step.command, ports);
  const attempt = async (): Promise<string> => {
    const { code, output } = await run(command);
    if (code !== 0) throw new Error(`${command}: exit ${String(code)}:\n${output}`);
    if (!matchesShown(step.expected, output))
      throw new Error(
        `${command} printed:\n${output}\nwhere the README shows:\n${step.expected.join('\n')}`,
      );
    return output;
  };
  if (!isRead(command)) return attempt();
  return eventually(attempt, { what: command, timeoutMs: 10_000, intervalMs: 200 });
}

const isServer = (command: string): boolean => /\bnpm run (demo|sim)\b/.test(command);

async function runSection(heading: string): Promise<number> {
  let count = 0;
  for (const step of blocks(section(README, heading)).flat()) {
    if (isServer(step.command)) await startServer(withPorts(step.command, ports));
    else await runStep(step);
    count++;
  }
  return count;
}

describe('README', () => {
  it('Set-up: the two commands, the first of which starts the demo', async () => {
    const commands = blocks(section(README, 'Set-up'))[0]?.map((s) =>
      s.command.replace(/\s+#.*$/, ''),
    );
    expect(commands).toEqual(['npm ci && npm run demo', 'npm ci && npm test']);
    // This test runs under `npm test` in an installed checkout: `npm ci` again would replace
    // node_modules under the running suites, so the demo is started from the second `&&` on.
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.test).toMatch(/\bjest\b/);
    await startServer('npm run demo');
  });

  it('Set-up: one command installs what the tests need, the script .ci/run runs', () => {
    const steps = blocks(section(README, 'Set-up')).flat();
    expect(steps.map((s) => s.command)).toContain('scripts/install-test-programs.sh');
    const script = readFileSync(path.join(ROOT, 'scripts', 'install-test-programs.sh'), 'utf8');
    const installed = [...script.matchAll(/missing\+=\(([\w.-]+)\)/g)].map((m) => m[1]).sort();
    expect(installed.length).toBeGreaterThanOrEqual(11);
    // The prose names every package the script may install, for other distributions.
    const named = /It installs what is missing of ([\w\s.-]+?), then/.exec(
      section(README, 'Set-up'),
    );
    expect(named?.[1]?.split(/\s+/).sort()).toEqual(installed);
    // Debian packages no helm: the script fetches it too, as .ci/run does for its own PATH.
    expect(script).toMatch(/^scripts\/get-helm\.sh\b/m);
    const ciRun = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8');
    expect(ciRun).toMatch(/^scripts\/install-test-programs\.sh$/m);
    expect(ciRun).toMatch(/^PATH="\$\(scripts\/get-helm\.sh\):\$PATH"/m);
    // apt-get as root without sudo, and never asked for a package whose program is there.
    expect(script).toMatch(/id -u/);
    expect(script).toMatch(/command -v kubectl [^\n]*\|\| missing\+=\(kubernetes-client\)/);
  });

  it('Try it: every command answers as shown', async () => {
    expect(await runSection('Try it')).toBeGreaterThanOrEqual(3);
  });

  it("Command-line tools: the client's example answers as shown", async () => {
    expect(await runSection('Command-line tools')).toBeGreaterThanOrEqual(1);
  });

  it('the xDS walkthrough: simulator, service, ACK, NACK and reconnection as shown', async () => {
    expect(await runSection('Running with a management server')).toBeGreaterThanOrEqual(6);
  });
});
