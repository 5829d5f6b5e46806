// The backends the bench runs the service against: one redis-server, a Sentinel-watched master,
// a three-master cluster, and memcached, all on the backend core, stopped by their process ids.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startMemcached } from './memcached';
import { captureOutput, freePort, pinned, stop, waitFor } from './processes';

/** The deployments a scenario can count in; `memcache` is BACKEND_TYPE's spelling. */
export type Deployed = 'redis' | 'sentinel' | 'cluster' | 'memcache';

/** One deployment: how the service reaches it and how the bench measures it. */
export interface Deployment {
  readonly backendType: 'redis' | 'memcache';
  /** The settings that point the service at it (REDIS_TYPE and REDIS_URL, MEMCACHE_HOST_PORT). */
  readonly env: Readonly<Record<string, string>>;
  /** The data nodes, whose CPU and commands count as Redis's. */
  readonly dataPids: () => (number | undefined)[];
  /** Commands the data nodes processed so far, less the INFO calls that asked. */
  commands(): number;
  /** Empties every data node between runs. */
  flush(): void;
  stop(): Promise<void>;
}

// Its stderr stays in the thrown error: a ping before the server is up is not news.
const cli = (port: number, ...args: string[]): string =>
  execFileSync('redis-cli', ['-p', String(port), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  }).toString();

function commandsOf(ports: readonly number[]): number {
  let total = 0;
  for (const port of ports) {
    const match = /total_commands_processed:(\d+)/.exec(cli(port, 'info', 'stats'));
    total += match === null ? 0 : Number(match[1]);
  }
  return total;
}

async function startServer(
  redisCores: string,
  dir: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = pinned(redisCores, 'redis-server', [
    ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    ...['--dir', dir, ...extra],
  ]);
  const output = captureOutput(child);
  await waitFor(
    () => cli(port, 'ping').includes('PONG'),
    () => `redis-server (is it installed?):\n${output()}`,
  );
  return { child, port };
}

function deployment(
  env: Record<string, string>,
  data: readonly { child: ChildProcess; port: number }[],
  others: readonly ChildProcess[],
): Deployment {
  const ports = data.map((d) => d.port);
  return {
    backendType: 'redis',
    env,
    dataPids: () => data.map((d) => d.child.pid),
    // Each node's INFO counts itself.
    commands: () => commandsOf(ports) - ports.length,
    flush: () => {
      for (const port of ports) cli(port, 'flushall');
    },
    stop: async () => {
      await Promise.all([...others, ...data.map((d) => d.child)].map((c) => stop(c)));
    },
  };
}

/** A master and one sentinel watching it (replicas would only add Redis's own work). */
async function startSentinel(cores: string, work: string): Promise<Deployment> {
  const master = await startServer(cores, mkdtempSync(path.join(work, 'master-')));
  const dir = mkdtempSync(path.join(work, 'sentinel-'));
  const config = path.join(dir, 'sentinel.conf');
  writeFileSync(config, `sentinel monitor bench 127.0.0.1 ${master.port} 1\n`);
  const sentinelPort = await freePort();
  const sentinel = pinned(cores, 'redis-server', [
    config,
    '--sentinel',
    ...['--port', String(sentinelPort), '--bind', '127.0.0.1', '--dir', dir],
  ]);
  const output = captureOutput(sentinel);
  await waitFor(
    () => cli(sentinelPort, 'sentinel', 'get-master-addr-by-name', 'bench').includes('127.0.0.1'),
    () => `redis-server --sentinel:\n${output()}`,
  );
  return deployment(
    { REDIS_TYPE: 'sentinel', REDIS_URL: `bench,127.0.0.1:${sentinelPort}` },
    [master],
    [sentinel],
  );
}

/** Three masters without replicas, so the Redis core runs only what the service asks. */
async function startCluster(cores: string, work: string): Promise<Deployment> {
  const nodes: { child: ChildProcess; port: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const bus = await freePort();
    nodes.push(
      await startServer(cores, mkdtempSync(path.join(work, `cluster${i}-`)), [
        ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'],
        ...['--cluster-port', String(bus)],
      ]),
    );
  }
  const seeds = nodes.map((n) => `127.0.0.1:${n.port}`);
  execFileSync('redis-cli', ['--cluster', 'create', ...seeds, '--cluster-yes'], {
    stdio: 'ignore',
    timeout: 30_000,
  });
  await waitFor(
    () => nodes.every((n) => cli(n.port, 'cluster', 'info').includes('cluster_state:ok')),
    () => 'the bench cluster to be ok',
  );
  return deployment({ REDIS_TYPE: 'cluster', REDIS_URL: seeds.join(',') }, nodes, []);
}

/** memcached, counted but not flushed (its keys expire like Redis's and never collide). */
async function startMemcache(cores: string): Promise<Deployment> {
  const memcached = await startMemcached(cores);
  return {
    backendType: 'memcache',
    env: { MEMCACHE_HOST_PORT: `127.0.0.1:${memcached.port}` },
    dataPids: () => [memcached.pid],
    commands: () => 0,
    flush: () => undefined,
    stop: () => stop(memcached.child),
  };
}

/** Starts the deployments the chosen scenarios use. */
export async function startDeployments(
  modes: ReadonlySet<Deployed>,
  cores: string,
  work: string,
): Promise<Map<Deployed, Deployment>> {
  const out = new Map<Deployed, Deployment>();
  try {
    if (modes.has('redis')) {
      const server = await startServer(cores, mkdtempSync(path.join(work, 'redis-')));
      out.set('redis', deployment({ REDIS_URL: `127.0.0.1:${server.port}` }, [server], []));
    }
    if (modes.has('sentinel')) out.set('sentinel', await startSentinel(cores, work));
    if (modes.has('cluster')) out.set('cluster', await startCluster(cores, work));
    if (modes.has('memcache')) out.set('memcache', await startMemcache(cores));
  } catch (err: unknown) {
    await Promise.all([...out.values()].map((d) => d.stop()));
    throw err;
  }
  return out;
}
