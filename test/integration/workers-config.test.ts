// WORKERS=2 compile each configuration once for the pod: the supervisor runs the provider and
// hands the compiled tables to both workers, which answer from the same version; a bad update
// is refused once for both, and a replacement worker gets the current tables without a compile.
// Over xDS the pod opens one ADS stream, whose one ACK or NACK speaks for every worker (the
// bundled control-plane simulator counts each node's streams and requests).
// Compile processes are counted from outside, whatever the service logs: NODE_OPTIONS requires
// a script into every Node process the service starts, and in a compile process it writes the
// process id to a file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { childrenOf, connectionsOn } from '../helpers/cluster-processes';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { SimProcess } from '../helpers/sim-process';

const RULES = 100_000;
const cleanup = collectCleanups();
let redis: RedisServer;
let counting: { readonly require: string; readonly pids: string };

beforeAll(async () => {
  redis = await RedisServer.start();
  cleanup(() => redis.stop());
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-compiles-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  counting = { require: path.join(dir, 'count.cjs'), pids: path.join(dir, 'compiles') };
  writeFileSync(counting.pids, '');
  writeFileSync(
    counting.require,
    `if (/compile-process\\.js$/.test(process.argv[1] || ''))\n` +
      `  require('node:fs').appendFileSync(${JSON.stringify(counting.pids)}, process.pid + '\\n');\n`,
  );
});

/** How many compile processes the service has started so far. */
function compiles(): number {
  return readFileSync(counting.pids, 'utf8').split('\n').filter(Boolean).length;
}

/** One domain of RULES descriptors `k=v<i>`, each allowing `perHour` requests an hour. */
function bigFile(perHour: number): string {
  const rule = `    rate_limit:\n      unit: hour\n      requests_per_unit: ${perHour}\n`;
  let text = 'domain: big\ndescriptors:\n';
  for (let i = 0; i < RULES; i++) text += `  - key: k\n    value: v${i}\n${rule}`;
  return text;
}

/** Six clients, each its own connection; the supervisor hands connections out in turn. */
function connect(port: number): RlsClient[] {
  const clients = Array.from(
    { length: 6 },
    () => new RlsClient(`127.0.0.1:${port}`, { 'grpc.use_local_subchannel_pool': 1 }),
  );
  cleanup(() => {
    for (const c of clients) c.close();
  });
  return clients;
}

/** The requests_per_unit each client is answered with, for a rule picked per call. */
async function limitsSeen(clients: readonly RlsClient[]): Promise<(number | undefined)[]> {
  return Promise.all(
    clients.map(async (client, i) => {
      const value = `v${Math.floor(Math.random() * RULES)}`;
      const res = await client.shouldRateLimit(rlsRequest('big', [[['k', value]]]));
      expect(res.statuses?.[0]?.code).toBe('OK');
      return res.statuses?.[0]?.currentLimit?.requestsPerUnit ?? -i;
    }),
  );
}

/** True when each worker holds at least one of the clients' connections. */
function reachesEveryWorker(workers: readonly number[], port: number): boolean {
  return workers.length === 2 && workers.every((pid) => connectionsOn(pid, port) >= 1);
}

/** The log lines about a refused configuration, from the supervisor and the workers. */
function refusalLines(service: ServiceProcess): string[] {
  return service.logs
    .split('\n')
    .filter((l) => l.includes('configuration refused') || l.includes('keeps serving'));
}

it('compiles a 100,000-rule file once per reload and both workers answer from the same version', async () => {
  // RUNTIME_WATCH_ROOT=true: each update is one swap of the root symlink, so one reload.
  const runtime = new RuntimeDir({ 'big.yaml': bigFile(5) }, true);
  cleanup(() => {
    runtime.destroy();
  });
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'redis',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      WORKERS: '2',
      NODE_OPTIONS: `--require ${counting.require}`,
    },
  });
  cleanup(() => service.stop());
  await eventually(() => service.logs.includes('workers listening'), {
    what: 'both workers to listen',
    timeoutMs: 30_000,
  });
  const port = service.ports.grpc;
  const workers = childrenOf(service.pid);
  expect(compiles()).toBe(1);

  const clients = connect(port);
  expect(await limitsSeen(clients)).toEqual([5, 5, 5, 5, 5, 5]);
  expect(reachesEveryWorker(workers, port)).toBe(true);

  // A reload: every connection, on either worker, is answered from the new version, which
  // was compiled once.
  const reloaded = bigFile(7);
  runtime.repoint({ 'big.yaml': reloaded });
  await eventually(async () => (await limitsSeen(clients)).every((limit) => limit === 7), {
    what: 'both workers to answer from the reloaded file',
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  expect(compiles()).toBe(2);

  // A bad update is refused once, for both workers; both go on answering from the last good one.
  runtime.repoint({
    'big.yaml': reloaded,
    'bad.yaml':
      'domain: bad\ndescriptors:\n  - key: x\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n',
  });
  await eventually(() => refusalLines(service).length > 0, {
    what: 'the refusal',
    timeoutMs: 30_000,
  });
  expect(compiles()).toBe(3);
  expect(await limitsSeen(clients)).toEqual([7, 7, 7, 7, 7, 7]);
  // The supervisor's file loader counted three loads; the first worker's statistics say so.
  expect(await service.stat('runtime.load_attempts')).toBe(3);
  await eventually(async () => (await service.stat('ratelimit.service.config_load_error')) === 1, {
    what: 'the first worker to count the refusal',
  });
  // Once for the pod, with its reason: not a line without it and a pair per worker.
  const refusals = refusalLines(service);
  expect(refusals).toHaveLength(1);
  expect(refusals[0]).toContain("invalid rate limit unit 'fortnight'");

  // A replacement worker serves the current tables at once, without compiling them again.
  for (const c of clients) c.close();
  const [victim] = workers;
  if (victim === undefined) throw new Error('no workers');
  process.kill(victim, 'SIGKILL');
  await eventually(() => /worker \d exited by SIGKILL; starting a replacement/.test(service.logs), {
    what: 'the supervisor to see the exit',
  });
  // New connections until one lands on the replacement (the survivor takes all until it listens).
  await eventually(
    async () => {
      const now = childrenOf(service.pid);
      if (now.includes(victim) || now.length !== 2) return false;
      const fresh = connect(port);
      try {
        expect(await limitsSeen(fresh)).toEqual([7, 7, 7, 7, 7, 7]);
        return reachesEveryWorker(now, port);
      } finally {
        for (const c of fresh) c.close();
      }
    },
    { what: 'the replacement to answer', timeoutMs: 30_000, intervalMs: 200 },
  );
  expect(compiles()).toBe(3);
});

it('opens one ADS stream for the pod, and one ACK or NACK answers for both workers', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-sim-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(
    path.join(dir, 'x.yaml'),
    'domain: x\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  );
  const sim = await SimProcess.start(dir);
  cleanup(() => sim.kill());
  const node = `node-${sim.port}`;
  const service = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'redis',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      WORKERS: '2',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
      CONFIG_GRPC_XDS_NODE_ID: node,
      NODE_OPTIONS: `--require ${counting.require}`,
    },
  });
  cleanup(() => service.stop());
  await eventually(() => service.logs.includes('workers listening'), {
    what: 'both workers to listen',
  });
  const compiled = compiles();
  await eventually(
    async () => {
      const status = await sim.status();
      return status.nodes[node]?.lastAckVersion === status.version;
    },
    { what: 'the ACK' },
  );
  const acked = (await sim.status()).nodes[node];
  expect(acked?.connectedStreams).toBe(1);
  // For each of the two types subscribed on the stream (RateLimitConfig and QuotaRules), the
  // first request and the ACK of the first response: one stream's worth, not one per worker.
  expect(acked?.requests).toBe(4);

  const port = service.ports.grpc;
  const clients = connect(port);
  const limits = async (): Promise<(number | undefined)[]> =>
    Promise.all(
      clients.map(async (client) => {
        const res = await client.shouldRateLimit(rlsRequest('x', [[['k', `${Math.random()}`]]]));
        return res.statuses?.[0]?.currentLimit?.requestsPerUnit;
      }),
    );
  expect(await limits()).toEqual([5, 5, 5, 5, 5, 5]);
  expect(reachesEveryWorker(childrenOf(service.pid), port)).toBe(true);

  await sim.post('/bad-resource');
  await eventually(() => refusalLines(service).length === 1, { what: 'the refusal' });
  // The simulator sends both types again: the NACK of the bad RateLimitConfig and the ACK of the
  // QuotaRules beside it, once for the pod. The workers may log the refusal before the
  // simulator has read the supervisor's answers.
  await eventually(
    async () => {
      const seen = (await sim.status()).nodes[node];
      return seen?.lastNack !== undefined && seen.requests >= 6;
    },
    { what: 'the NACK and the QuotaRules ACK' },
  );
  const nacked = (await sim.status()).nodes[node];
  expect(nacked?.requests).toBe(6);
  expect(nacked?.connectedStreams).toBe(1);
  // The refusal's one line names the version refused; the NACK itself logs only at debug.
  expect(refusalLines(service)[0]).toContain(`version=${nacked?.lastNack?.version ?? '?'}`);
  expect(service.logs).not.toContain('refused an xDS update (NACK)');
  expect(compiles()).toBe(compiled + 1);
  expect(await limits()).toEqual([5, 5, 5, 5, 5, 5]);
});
