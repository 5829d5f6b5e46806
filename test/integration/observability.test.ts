// What operators see: statsd datagrams from the running server, the debug listener, log formats.
import dgram from 'node:dgram';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { collectCleanups } from '../helpers/cleanups';

const CONFIG = {
  'obs.yaml':
    'domain: obs\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 2 }\n',
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();

it('flushes counters to statsd over UDP as deltas every STATS_FLUSH_INTERVAL', async () => {
  const socket = dgram.createSocket('udp4');
  const lines: string[] = [];
  socket.on('message', (msg) => lines.push(...msg.toString().split('\n')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  cleanup(() => {
    socket.close();
  });
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      USE_STATSD: 'true',
      STATSD_HOST: '127.0.0.1',
      STATSD_PORT: String(socket.address().port),
      STATS_FLUSH_INTERVAL: '100ms',
    },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  await client.shouldRateLimit(rlsRequest('obs', [[['k', 'statsd']]], 3));
  expect(await client.healthCheck()).toBe('SERVING');
  await eventually(() => lines.includes('ratelimit.service.rate_limit.obs.k.over_limit:1|c'), {
    what: 'the first flush',
  });
  // Health checks are counted like every unary call, under their own method name.
  await eventually(
    () =>
      lines.includes('ratelimit_server.Check.total_requests:1|c') &&
      lines.some((l) => /^ratelimit_server\.Check\.response_time:[\d.]+\|ms$/.test(l)),
    { what: 'the health check statistics' },
  );
  expect(lines).toContain('ratelimit.service.rate_limit.obs.k.total_hits:3|c');
  expect(lines).toContain('ratelimit.service.rate_limit.obs.k.near_limit:1|c');
  expect(lines).toContain('ratelimit.service.config_load_success:1|c');
  expect(lines).toContain('ratelimit_server.ShouldRateLimit.total_requests:1|c');
  expect(
    lines.some((l) => /^ratelimit_server\.ShouldRateLimit\.response_time:[\d.]+\|ms$/.test(l)),
  ).toBe(true);
  const seen = lines.length;
  await client.shouldRateLimit(rlsRequest('obs', [[['k', 'statsd']]], 1));
  await eventually(
    () => lines.slice(seen).includes('ratelimit.service.rate_limit.obs.k.total_hits:1|c'),
    { what: 'the delta' },
  );
  expect(
    lines.slice(seen).filter((l) => l.startsWith('ratelimit.service.config_load_success')),
  ).toEqual([]);
});

it('serves the debug listener: index, configuration, statistics, heap snapshot and CPU profile', async () => {
  // Profiling holds memory contents, so it is off unless asked for.
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', DEBUG_PROFILING_ENABLED: 'true' },
  });
  cleanup(() => service.stop());
  const index = await (await fetch(service.debugUrl('/'))).text();
  expect(index.split('\n').map((l) => l.split(':')[0])).toEqual(
    expect.arrayContaining([
      '/rlconfig',
      '/stats',
      '/debug/pprof/',
      '/debug/pprof/heap',
      '/debug/pprof/profile',
    ]),
  );
  expect(await (await fetch(service.debugUrl('/rlconfig'))).text()).toBe(
    'obs.k: unit=HOUR requests_per_unit=2, shadow_mode: false, quota_mode: false\n',
  );
  const stats = await (await fetch(service.debugUrl('/stats'))).text();
  expect(stats).toContain('ratelimit.service.config_load_success: 1\n');
  expect(stats).toContain('ratelimit.service.rate_limit.obs.k.total_hits: 0\n');
  const heap = await fetch(service.debugUrl('/debug/pprof/heap'));
  expect(heap.status).toBe(200);
  const snapshot = JSON.parse(await heap.text()) as { snapshot?: { node_count?: number } };
  expect(snapshot.snapshot?.node_count).toBeGreaterThan(1000);
  const profile = await fetch(service.debugUrl('/debug/pprof/profile?seconds=0.2'));
  expect(profile.status).toBe(200);
  const parsed = (await profile.json()) as { nodes?: unknown[]; startTime?: number };
  expect(parsed.nodes?.length).toBeGreaterThan(0);
  expect((await fetch(service.debugUrl('/debug/pprof/profile?seconds=9999'))).status).toBe(400);
  expect((await fetch(service.debugUrl('/nothing'))).status).toBe(404);
});

it('writes JSON log lines with LOG_FORMAT=json and never logs credentials', async () => {
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      REDIS_URL: 'redis://admin:t0psecret@127.0.0.1:1',
      REDIS_STARTUP_MAX_ELAPSED_TIME: '200ms',
      REDIS_STARTUP_INITIAL_INTERVAL: '50ms',
    },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  expect(await service.waitForExit()).toBe(1);
  const jsonLines = service.logs.split('\n').filter((l) => l.startsWith('{'));
  expect(jsonLines.length).toBeGreaterThan(1);
  for (const line of jsonLines) {
    expect(Object.keys(JSON.parse(line) as object).slice(0, 3)).toEqual([
      '@timestamp',
      'level',
      '@message',
    ]);
  }
  expect(service.logs).toContain('redis://*****@127.0.0.1:1');
  expect(service.logs).not.toContain('t0psecret');
});

it('counts nothing with DISABLE_STATS', async () => {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', DISABLE_STATS: 'true' },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  expect((await client.shouldRateLimit(rlsRequest('obs', [[['k', 'off']]]))).overallCode).toBe(
    'OK',
  );
  expect(await (await fetch(service.debugUrl('/stats'))).text()).toBe('');
  expect(await service.signal('SIGTERM')).toBe(0);
  expect(service.logs).not.toContain('|c');
});
