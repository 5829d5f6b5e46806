// A Redis outage: errors while it is down (counted), recovery when it returns, startup retries.
import { status } from '@grpc/grpc-js';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { unusedPort } from '../helpers/ports';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { collectCleanups } from '../helpers/cleanups';

const CONFIG = {
  'outage.yaml': `
domain: outage
descriptors:
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 1000 }
`,
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();
const run = `${process.pid}${Date.now() % 100000}`;

it('fails with UNAVAILABLE and 500 while Redis is down, counts it, and recovers', async () => {
  const redis = await RedisServer.start();
  cleanup(() => redis.destroy());
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), REDIS_URL: `127.0.0.1:${redis.port}`, REDIS_TIMEOUT: '500ms' },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
    return Promise.resolve();
  });
  const request = rlsRequest('outage', [[['per_hour', `o${run}`]]]);
  expect((await client.shouldRateLimit(request)).overallCode).toBe('OK');

  await redis.stop();
  const err = await eventually(() => client.error(request), { what: 'a failing call' });
  expect(err.code).toBe(status.UNAVAILABLE);
  expect(err.details).toMatch(/^redis backend: /);
  const http = await fetch(service.url('/json'), {
    method: 'POST',
    body: JSON.stringify({
      domain: 'outage',
      descriptors: [{ entries: [{ key: 'per_hour', value: `o${run}` }] }],
    }),
  });
  expect(http.status).toBe(500);
  expect(((await http.json()) as { error: string }).error).toBe('STORE_UNAVAILABLE');
  expect(
    await service.stat('ratelimit.service.call.should_rate_limit.redis_error'),
  ).toBeGreaterThanOrEqual(2);
  // Without REDIS_HEALTH_CHECK_ACTIVE_CONNECTION the health check does not follow Redis.
  expect((await fetch(service.url('/healthcheck'))).status).toBe(200);

  await redis.restart();
  await eventually(async () => (await client.shouldRateLimit(request)).overallCode === 'OK', {
    what: 'recovery after Redis returns',
    timeoutMs: 15_000,
  });
});

it('turns unhealthy while Redis is down with REDIS_HEALTH_CHECK_ACTIVE_CONNECTION', async () => {
  const redis = await RedisServer.start();
  cleanup(() => redis.destroy());
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_URL: `127.0.0.1:${redis.port}`,
      REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
    },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
    return Promise.resolve();
  });
  await redis.stop();
  await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 500, {
    what: 'unhealthy',
  });
  expect(await client.healthCheck()).toBe('NOT_SERVING');
  await redis.restart();
  await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 200, {
    what: 'healthy again',
    timeoutMs: 15_000,
  });
  expect(await client.healthCheck()).toBe('SERVING');
});

it('waits for Redis at start-up, retrying with backoff', async () => {
  // The service gets Redis's address before Redis runs, so this port is picked in advance.
  const port = await unusedPort();
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_URL: `127.0.0.1:${port}`,
      REDIS_STARTUP_INITIAL_INTERVAL: '100ms',
      REDIS_STARTUP_MAX_INTERVAL: '200ms',
    },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  await eventually(() => service.logs.includes('cannot connect to redis yet, retrying'), {
    what: 'a retry',
  });
  const redis = await RedisServer.start({ port });
  cleanup(() => redis.destroy());
  await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 200, {
    what: 'the service to start',
    timeoutMs: 15_000,
  });
});

it('gives up after REDIS_STARTUP_MAX_ELAPSED_TIME and exits non-zero', async () => {
  const port = await unusedPort();
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_URL: `127.0.0.1:${port}`,
      REDIS_STARTUP_INITIAL_INTERVAL: '50ms',
      REDIS_STARTUP_MAX_ELAPSED_TIME: '300ms',
    },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  expect(await service.waitForExit()).toBe(1);
  expect(service.logs).toContain('giving up connecting to redis');
  expect(service.logs).toMatch(
    /ratelimit: redis backend: cannot connect to tcp 127\.0\.0\.1:\d+: connect ECONNREFUSED/,
  );
});
