// A Redis outage: errors in the operator's words while it is down (counted, logged in a few lines),
// recovery when it returns, startup retries.
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

/** The log lines (text format) whose message contains `text`. */
function linesWith(logs: string, text: string): string[] {
  return logs.split('\n').filter((line) => line.includes(text));
}
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
  const address = `127.0.0.1:${redis.port}`;
  // Once a reconnection attempt has failed, callers get its reason.
  const err = await eventually(
    async () => {
      const failure = await client.error(request);
      expect(failure.details).toBe(`redis backend unreachable (${address}): connection refused`);
      return failure;
    },
    { what: 'a call failing with the reason' },
  );
  expect(err.code).toBe(status.UNAVAILABLE);
  const json = (): Promise<Response> =>
    fetch(service.url('/json'), {
      method: 'POST',
      body: JSON.stringify({
        domain: 'outage',
        descriptors: [{ entries: [{ key: 'per_hour', value: `o${run}` }] }],
      }),
    });
  const http = await json();
  expect(http.status).toBe(500);
  expect(await http.json()).toEqual({
    error: 'STORE_UNAVAILABLE',
    message: `redis backend unreachable (${address}): connection refused`,
  });
  // 500 more failed requests, over both front ends, make no line each.
  for (let round = 0; round < 10; round++) {
    const failures = await Promise.all([
      ...Array.from({ length: 25 }, () => client.error(request)),
      ...Array.from({ length: 25 }, () => json()),
    ]);
    expect(failures).toHaveLength(50);
  }
  const redisErrors = (): Promise<number> =>
    service.stat('ratelimit.service.call.should_rate_limit.redis_error');
  expect(await redisErrors()).toBeGreaterThanOrEqual(502);
  // Without REDIS_HEALTH_CHECK_ACTIVE_CONNECTION the health check does not follow Redis.
  expect((await fetch(service.url('/healthcheck'))).status).toBe(200);

  await redis.restart();
  await eventually(async () => (await client.shouldRateLimit(request)).overallCode === 'OK', {
    what: 'recovery after Redis returns',
    timeoutMs: 15_000,
  });
  await eventually(() => linesWith(service.logs, 'reachable again').length === 1, {
    what: 'the line saying Redis is back',
  });
  // Every failed call, those of the recovery loop included, is in the count of the line.
  const failed = await redisErrors();
  const [away, ...summaries] = linesWith(service.logs, `unreachable (${address})`);
  expect(away).toMatch(
    new RegExp(
      `level=error msg="redis backend unreachable \\(${address}\\): connection (closed|refused)"`,
    ),
  );
  // At most one summary per 10 s while it was away; this outage lasted less than that.
  expect(summaries.filter((line) => !line.includes('still unreachable'))).toEqual([]);
  expect(summaries.length).toBeLessThanOrEqual(1);
  const [back] = linesWith(service.logs, 'reachable again');
  expect(back).toMatch(
    new RegExp(
      `msg="redis backend reachable again \\(${address}\\) after \\d+\\.\\d s; ${failed} requests failed meanwhile"`,
    ),
  );
  expect(linesWith(service.logs, 'rate limit request failed')).toEqual([]);
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

it('waits for Redis at start-up, retrying with backoff, logging the wait once', async () => {
  // The service gets Redis's address before Redis runs, so this port is picked in advance.
  const port = await unusedPort();
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_URL: `127.0.0.1:${port}`,
      REDIS_STARTUP_INITIAL_INTERVAL: '100ms',
      REDIS_STARTUP_MAX_INTERVAL: '200ms',
      LOG_LEVEL: 'debug',
    },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  const retries = (): string[] =>
    service.logs.split('\n').filter((l) => l.includes('msg="cannot connect to redis yet'));
  await eventually(() => retries().length >= 3, { what: 'three retries' });
  const redis = await RedisServer.start({ port });
  cleanup(() => redis.destroy());
  await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 200, {
    what: 'the service to start',
    timeoutMs: 15_000,
  });
  // Each retry alike is a debug line: the wait is one warning, not one per attempt.
  expect(retries().filter((l) => l.includes('level=warning'))).toHaveLength(1);
  await service.logged(/level=info msg="connected to redis"/);
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
