// The built service on BACKEND_TYPE=memcache started before its memcached: not ready while
// memcached is absent, calls fail cleanly, and it becomes ready and counts once memcached appears.
//
// The peer: envoyproxy/ratelimit's src/memcached/cache_impl.go (NewRateLimitCacheImplFromSettings)
// builds its gomemcache client without the server's HealthChecker, and src/settings/settings.go
// ties health to a backend only through REDIS_HEALTH_CHECK_ACTIVE_CONNECTION (src/redis/
// driver_impl.go, poolTrace). So after start-up a memcached outage does not fail /healthcheck here
// either; only the first connection gates readiness, so start-up order never matters.
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { MemcachedServer } from '../helpers/memcached-server';
import { unusedPort } from '../helpers/ports';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const runtime = runtimeDirForFile({
  'late.yaml': `
domain: late
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 100 }
`,
});
const cleanup = collectCleanups();
const run = `${process.pid}${Date.now() % 100000}`;

const call = {
  domain: 'late',
  descriptors: [{ entries: [{ key: 'user', value: `u${run}` }] }],
};

async function healthStatus(service: ServiceProcess): Promise<number> {
  const res = await fetch(service.url('/healthcheck'));
  await res.text();
  return res.status;
}

it('is not ready until memcached first answers, then serves and counts', async () => {
  const port = await unusedPort();
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memcache',
      MEMCACHE_HOST_PORT: `127.0.0.1:${port}`,
      CACHE_KEY_PREFIX: `st${run}_`,
      MEMCACHE_TIMEOUT: '2s',
    },
    waitFor: 'listening',
  });
  cleanup(() => service.stop());

  // The store opens before the listeners, so the backend's state is known once they answer.
  await eventually(
    async () => {
      const components = (await (
        await fetch(service.debugUrl('/healthcheck/components'))
      ).json()) as Record<string, unknown>;
      expect(components).toMatchObject({ backend: false });
    },
    { timeoutMs: 3_000, what: 'the backend reported down' },
  );
  expect(await healthStatus(service)).toBe(500);
  const refused = await service.json(call);
  expect(refused.status).toBe(500);
  expect(JSON.stringify(refused.body)).toContain(`127.0.0.1:${port}`);

  const memcached = await MemcachedServer.start({ port });
  cleanup(() => memcached.stop());

  // The probes back off to at most 2 s apart, so 8 s is ample even on a loaded machine.
  await eventually(async () => (await healthStatus(service)) === 200, {
    timeoutMs: 8_000,
    what: '/healthcheck to answer 200 once memcached serves',
  });
  const counted = await service.json(call);
  expect(counted.status).toBe(200);
  expect(counted.body).toMatchObject({ overallCode: 'OK' });
  const window = Math.floor(Date.now() / 3_600_000) * 3600;
  expect((await memcached.item(`st${run}_late_user_u${run}_${window}`))?.value).toBe('1');

  const waiting = service.logs.split('\n').filter((l) => l.includes('memcached is not answering'));
  expect(waiting.filter((l) => l.includes('level=warning'))).toHaveLength(1);
  await service.logged(/level=info .*memcached answers/);
  expect(service.logs).not.toContain('level=error');

  // Past start-up an outage shows in the components but, as in the reference, not in health.
  await memcached.stop();
  expect((await service.json(call)).status).toBe(500);
  await eventually(async () => {
    const components = (await (
      await fetch(service.debugUrl('/healthcheck/components'))
    ).json()) as Record<string, unknown>;
    expect(components).toMatchObject({ backend: false });
  });
  expect(await healthStatus(service)).toBe(200);
}, 20_000);
