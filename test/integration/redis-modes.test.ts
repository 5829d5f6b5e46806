// Redis backend options of the built server: local cache, stop-increment, global shadow,
// per-second instance, authentication and unix sockets, checked in Redis itself.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { inOneWindow, windowStart } from '../helpers/windows';

const CONFIG = {
  'modes.yaml': `
domain: modes
descriptors:
  - key: per_second
    rate_limit: { unit: second, requests_per_unit: 100 }
  - key: per_minute
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 10 }
`,
};

let redis: RedisServer;
let runtime: RuntimeDir;
const run = `${process.pid}${Date.now() % 100000}`;
const started: { service: ServiceProcess; client: RlsClient }[] = [];

async function start(
  env: Record<string, string>,
  server: RedisServer = redis,
): Promise<{ service: ServiceProcess; client: RlsClient }> {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), REDIS_URL: `127.0.0.1:${server.port}`, ...env },
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  started.push({ service, client });
  return { service, client };
}

async function commandCalls(server: RedisServer, command: string): Promise<number> {
  const client = server.client();
  try {
    const info = await client.info('commandstats');
    const match = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info);
    return match === null ? 0 : Number(match[1]);
  } finally {
    client.disconnect();
  }
}

beforeAll(async () => {
  redis = await RedisServer.start();
  runtime = new RuntimeDir(CONFIG);
});

afterAll(async () => {
  for (const s of started) {
    s.client.close();
    await s.service.stop();
  }
  await redis.destroy();
  runtime.destroy();
});

it('answers from the local cache once over the limit, without asking Redis', async () => {
  const { service, client } = await start({ LOCAL_CACHE_SIZE_IN_BYTES: '1000000' });
  await inOneWindow(60, async (n) => {
    const v = `lc${run}_${n}`;
    expect(
      (await client.shouldRateLimit(rlsRequest('modes', [[['per_minute', v]]]))).overallCode,
    ).toBe('OK');
    expect(
      (await client.shouldRateLimit(rlsRequest('modes', [[['per_minute', v]]]))).overallCode,
    ).toBe('OVER_LIMIT');
    const before = await commandCalls(redis, 'incrby');
    for (let i = 0; i < 5; i++) {
      expect(
        (await client.shouldRateLimit(rlsRequest('modes', [[['per_minute', v]]]))).overallCode,
      ).toBe('OVER_LIMIT');
    }
    expect(await commandCalls(redis, 'incrby')).toBe(before);
    const check = redis.client();
    try {
      expect(await check.get(`modes_per_minute_${v}_${windowStart(60)}`)).toBe('2');
    } finally {
      check.disconnect();
    }
  });
  expect(
    await service.stat('ratelimit.service.rate_limit.modes.per_minute.over_limit_with_local_cache'),
  ).toBeGreaterThanOrEqual(5);
  // The reference's cache and pool gauges, for existing dashboards.
  expect(await service.stat('ratelimit.localcache.hitCount')).toBeGreaterThanOrEqual(5);
  expect(await service.stat('ratelimit.localcache.entryCount')).toBeGreaterThanOrEqual(1);
  expect(await service.stat('ratelimit.redis_pool.cx_active')).toBe(1);
  expect(await service.stat('ratelimit.redis_pool.cx_total')).toBe(1);
});

it('stops incrementing the other keys when one would pass its limit', async () => {
  const { client } = await start({ STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true' });
  await inOneWindow(60, async (n) => {
    const v = `si${run}_${n}`;
    const request = rlsRequest('modes', [[['per_minute', v]], [['per_hour', v]]]);
    expect((await client.shouldRateLimit(request)).overallCode).toBe('OK');
    const second = await client.shouldRateLimit(request);
    expect(second.overallCode).toBe('OVER_LIMIT');
    expect(second.statuses?.[1]?.limitRemaining).toBe(9);
    const check = redis.client();
    try {
      expect(await check.get(`modes_per_minute_${v}_${windowStart(60)}`)).toBe('2');
      expect(await check.get(`modes_per_hour_${v}_${windowStart(3600)}`)).toBe('1');
    } finally {
      check.disconnect();
    }
  });
});

it('answers OK in global shadow mode and counts it', async () => {
  const { service, client } = await start({ SHADOW_MODE: 'true' });
  await inOneWindow(60, async (n) => {
    const v = `gs${run}_${n}`;
    await client.shouldRateLimit(rlsRequest('modes', [[['per_minute', v]]]));
    const res = await client.shouldRateLimit(rlsRequest('modes', [[['per_minute', v]]]));
    expect(res.overallCode).toBe('OK');
    expect(res.statuses?.[0]?.code).toBe('OVER_LIMIT');
  });
  expect(await service.stat('ratelimit.service.global_shadow_mode')).toBeGreaterThanOrEqual(1);
});

it('keeps per-second limits on their own instance with REDIS_PERSECOND', async () => {
  const perSecond = await RedisServer.start();
  try {
    const { client } = await start({
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_URL: `127.0.0.1:${perSecond.port}`,
    });
    const v = `psi${run}`;
    const res = await client.shouldRateLimit(
      rlsRequest('modes', [[['per_second', v]], [['per_hour', v]]]),
    );
    expect(res.overallCode).toBe('OK');
    const main = redis.client();
    const second = perSecond.client();
    try {
      expect(await second.keys(`modes_per_second_${v}_*`)).toHaveLength(1);
      expect(await main.keys(`modes_per_second_${v}_*`)).toHaveLength(0);
      expect(await main.keys(`modes_per_hour_${v}_*`)).toHaveLength(1);
      expect(await second.keys(`modes_per_hour_${v}_*`)).toHaveLength(0);
    } finally {
      main.disconnect();
      second.disconnect();
    }
  } finally {
    await perSecond.destroy();
  }
});

it('authenticates with REDIS_AUTH and REDIS_AUTH_FILE', async () => {
  const secured = await RedisServer.start({ password: 's3cret pass' });
  try {
    const { client, service } = await start({ REDIS_AUTH: 's3cret pass' }, secured);
    expect(
      (await client.shouldRateLimit(rlsRequest('modes', [[['per_hour', `auth${run}`]]])))
        .overallCode,
    ).toBe('OK');
    expect(service.logs).not.toContain('s3cret');
    const file = path.join(runtime.base, 'redis-auth');
    writeFileSync(file, '  s3cret pass\n');
    const fromFile = await start({ REDIS_AUTH_FILE: file }, secured);
    expect(
      (await fromFile.client.shouldRateLimit(rlsRequest('modes', [[['per_hour', `authf${run}`]]])))
        .overallCode,
    ).toBe('OK');
  } finally {
    await secured.destroy();
  }
});

it('connects over a unix socket', async () => {
  const local = await RedisServer.start({ unixSocket: true });
  try {
    const { client } = await start({ REDIS_URL: local.socketPath ?? '' }, local);
    expect(
      (await client.shouldRateLimit(rlsRequest('modes', [[['per_hour', `uds${run}`]]])))
        .overallCode,
    ).toBe('OK');
    const check = local.client();
    try {
      expect(await check.keys(`modes_per_hour_uds${run}_*`)).toHaveLength(1);
    } finally {
      check.disconnect();
    }
  } finally {
    await local.destroy();
  }
});
