// WORKERS=2: a supervisor and two worker processes sharing the listeners and the Redis
// counters, one Prometheus scrape for both, replacement of a dead worker, and clean exits.
import net from 'node:net';
import { launchChromium } from '../../scripts/chromium';
import { collectCleanups } from '../helpers/cleanups';
import { childrenOf, connectionsOn, isAlive } from '../helpers/cluster-processes';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { parseExposition } from '../helpers/prometheus';
import { RedisServer } from '../helpers/redis-server';
import { unusedPort } from '../helpers/ports';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
let redis: RedisServer;
let runtime: RuntimeDir;

beforeAll(async () => {
  redis = await RedisServer.start();
  cleanup(() => redis.stop());
  runtime = new RuntimeDir({
    'w.yaml':
      'domain: w\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  });
  cleanup(() => {
    runtime.destroy();
  });
});

/** Two workers on the suite's Redis and configuration. */
function workersEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...runtime.env(),
    BACKEND_TYPE: 'redis',
    REDIS_URL: `127.0.0.1:${redis.port}`,
    WORKERS: '2',
    ...extra,
  };
}

async function startWorkers(extra: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({ env: workersEnv(extra) });
  cleanup(() => service.stop());
  // Healthy means one worker answers; the supervisor says when both listen.
  await eventually(() => service.logs.includes('workers listening'), {
    what: 'both workers to listen',
  });
  expect(childrenOf(service.pid)).toHaveLength(2);
  return service;
}

it('shares the listeners and the Redis counters between two workers, with one scrape for both', async () => {
  const service = await startWorkers({
    USE_PROMETHEUS: 'true',
    PROMETHEUS_ADDR: '127.0.0.1:0',
  });
  const metricsPort = service.ports.metrics;
  const workers = childrenOf(service.pid);
  // Each client is its own connection; the supervisor hands connections out in turn.
  const clients = Array.from(
    { length: 6 },
    () => new RlsClient(`127.0.0.1:${service.ports.grpc}`, { 'grpc.use_local_subchannel_pool': 1 }),
  );
  cleanup(() => {
    for (const c of clients) c.close();
  });
  const codes: (string | undefined)[] = [];
  for (const client of clients)
    codes.push((await client.shouldRateLimit(rlsRequest('w', [[['k', 'shared']]]))).overallCode);
  expect(codes).toEqual(['OK', 'OK', 'OK', 'OK', 'OK', 'OVER_LIMIT']);
  // Each worker holds some of the six connections.
  const held = workers.map((pid) => connectionsOn(pid, service.ports.grpc));
  expect(held.reduce((a, b) => a + b, 0)).toBe(6);
  for (const count of held) expect(count).toBeGreaterThanOrEqual(2);

  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(res.status).toBe(200);
  const metrics = parseExposition(await res.text());
  expect(metrics.get('ratelimit_service_rate_limit_total_hits{domain="w",key1="k"}')).toBe(6);
  expect(metrics.get('ratelimit_service_rate_limit_over_limit{domain="w",key1="k"}')).toBe(1);
  // Every worker reports the build info; the sum over workers keeps it at 1.
  const buildInfo = [...metrics].filter(([name]) => name.startsWith('ratelimit_build_info{'));
  expect(buildInfo.map(([, value]) => value)).toEqual([1]);
  // The first worker alone serves the debug listener.
  expect((await fetch(service.debugUrl('/rlconfig'))).status).toBe(200);
  await expectTotalsAsPrometheus(service, metricsPort);
});

/** `/stats` as name to value, and the number of workers it says it sums. */
async function debugStats(service: ServiceProcess): Promise<[Map<string, number>, string | null]> {
  const res = await fetch(service.debugUrl('/stats'));
  const values = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const at = line.lastIndexOf(': ');
    if (at > 0) values.set(line.slice(0, at), Number(line.slice(at + 2)));
  }
  return [values, res.headers.get('x-ratelimit-workers')];
}

/**
 * The debug listener (served by the first worker) and its status page show the totals of both
 * workers, as the supervisor's Prometheus scrape sums them: six calls spread over the two.
 */
async function expectTotalsAsPrometheus(service: ServiceProcess, metricsPort: number | undefined) {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const metrics = parseExposition(await res.text());
  const calls = metrics.get('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"}');
  expect(calls).toBe(6);
  const [stats, workers] = await debugStats(service);
  expect(workers).toBe('2');
  expect(stats.get('ratelimit_server.ShouldRateLimit.total_requests')).toBe(calls);
  expect(stats.get('ratelimit.service.rate_limit.w.k.total_hits')).toBe(
    metrics.get('ratelimit_service_rate_limit_total_hits{domain="w",key1="k"}'),
  );
  expect(stats.get('ratelimit.service.rate_limit.w.k.over_limit')).toBe(1);
  const browser = await launchChromium();
  try {
    const page = await browser.context.newPage();
    await page.goto(service.debugUrl('/'));
    await page.locator('#stat-requests .value', { hasText: /^6$/ }).waitFor();
    await page.locator('#stat-total_hits .value', { hasText: /^6$/ }).waitFor();
    expect(await page.locator('#stats-note').innerText()).toContain('totals of 2 workers');
  } finally {
    await browser.close();
  }
}

it('replaces a worker that dies and keeps answering meanwhile', async () => {
  const service = await startWorkers();
  const [victim, survivor] = childrenOf(service.pid);
  if (victim === undefined || survivor === undefined) throw new Error('no workers');
  process.kill(victim, 'SIGKILL');
  // node:cluster loses a connection it hands to a worker in the instant that worker dies (the
  // handle waits for an acknowledgement that never comes), so connect once the supervisor has
  // seen the exit: from then on every new connection goes to the survivor until the
  // replacement is ready.
  await eventually(() => /worker \d exited by SIGKILL; starting a replacement/.test(service.logs), {
    what: 'the supervisor to see the exit',
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  expect((await client.shouldRateLimit(rlsRequest('w', [[['k', 'replace']]]))).overallCode).toBe(
    'OK',
  );
  await eventually(
    () => {
      const now = childrenOf(service.pid);
      return now.length === 2 && now.includes(survivor) && !now.includes(victim);
    },
    { what: 'a replacement worker' },
  );
});

it('stops every worker on SIGTERM and exits 0', async () => {
  const service = await startWorkers();
  const workers = childrenOf(service.pid);
  expect(await service.signal('SIGTERM')).toBe(0);
  await eventually(() => workers.every((pid) => !isAlive(pid)), { what: 'the workers to exit' });
});

it('lets the workers go when the supervisor is killed', async () => {
  const service = await startWorkers();
  const workers = childrenOf(service.pid);
  await service.signal('SIGKILL');
  await eventually(() => workers.every((pid) => !isAlive(pid)), {
    what: 'orphaned workers to exit',
  });
});

it('exits 1 with the reason when a worker cannot start', async () => {
  const blocker = net.createServer();
  const port = await new Promise<number>((resolve) => {
    blocker.listen(0, '127.0.0.1', () => {
      resolve((blocker.address() as net.AddressInfo).port);
    });
  });
  cleanup(
    () =>
      new Promise<void>((resolve) => {
        blocker.close(() => {
          resolve();
        });
      }),
  );
  const service = await ServiceProcess.start({
    env: workersEnv({ DEBUG_PORT: String(port) }),
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  expect(await service.waitForExit()).toBe(1);
  expect(service.logs).toContain(`cannot listen for debug on 127.0.0.1:${port}`);
  expect(service.logs).toMatch(/worker 0 exited with code 1 before it was ready/);
});

it('exits 0 on SIGTERM while its workers are still starting', async () => {
  // xDS from a management server that is not there: the workers wait for their first
  // configuration, connected to Redis but not yet listening, with no drain of their own yet.
  const nobody = await unusedPort();
  const service = await ServiceProcess.start({
    env: workersEnv({
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${String(nobody)}`,
    }),
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  await eventually(() => service.logs.split('connected to redis').length - 1 === 2, {
    what: 'both workers connected to Redis',
  });
  expect(service.logs).not.toContain('workers listening');
  expect(await service.signal('SIGTERM')).toBe(0);
  expect(service.logs).not.toContain('before it was ready');
});

it('refuses WORKERS above 1 with the memory backend before forking anything', async () => {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', WORKERS: '2' },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  expect(await service.waitForExit()).toBe(1);
  expect(service.logs).toContain('WORKERS is 2 but BACKEND_TYPE is memory');
});
