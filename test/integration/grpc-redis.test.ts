// The built server as a process, Redis beside it, driven over gRPC: decisions, keys and TTLs.
import { status } from '@grpc/grpc-js';
import { RlsClient, rlsRequest, resetNow, type WireResponse } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { inOneWindow, windowStart } from '../helpers/windows';

const CONFIG = {
  'basic.yaml': `
domain: basic
descriptors:
  - key: per_second
    rate_limit: { unit: second, requests_per_unit: 5 }
  - key: one_per_minute
    rate_limit: { unit: minute, requests_per_unit: 1 }
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: per_day
    rate_limit: { unit: day, requests_per_unit: 20 }
  - key: blocked
    rate_limit: { unit: minute, requests_per_unit: 0 }
  - key: unlimited
    rate_limit: { unlimited: true }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: tier
    value: gold
    descriptors:
      - key: user
        rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: path
    value: /files/*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: path
    value: /api/*
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: small
    rate_limit: { unit: hour, requests_per_unit: 1, name: small }
  - key: big
    rate_limit:
      unit: hour
      requests_per_unit: 100
      replaces: [{ name: small }]
`,
};

let redis: RedisServer;
let runtime: RuntimeDir;
let service: ServiceProcess;
let client: RlsClient;
const run = `${process.pid}${Date.now() % 100000}`;

beforeAll(async () => {
  redis = await RedisServer.start();
  runtime = new RuntimeDir(CONFIG);
  service = await ServiceProcess.start({
    env: { ...runtime.env(), REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: `127.0.0.1:${redis.port}` },
  });
  client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
});

afterAll(async () => {
  client.close();
  await service.stop();
  await redis.destroy();
  runtime.destroy();
});

function statusOf(
  res: WireResponse,
  i = 0,
): {
  code: string | undefined;
  remaining: number;
  rpu: number | undefined;
  unit: string | undefined;
  reset: number | undefined;
} {
  const s = res.statuses?.[i];
  return {
    code: s?.code,
    remaining: s?.limitRemaining ?? 0,
    rpu: s?.currentLimit?.requestsPerUnit,
    unit: s?.currentLimit?.unit,
    reset: s?.durationUntilReset?.seconds,
  };
}

it('counts a per-second limit down to OVER_LIMIT', async () => {
  await inOneWindow(1, async (n) => {
    const value = `ps${run}_${n}`;
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await client.shouldRateLimit(rlsRequest('basic', [[['per_second', value]]]));
      remaining.push(statusOf(res).remaining);
      if (i < 5)
        expect(statusOf(res)).toMatchObject({ code: 'OK', rpu: 5, unit: 'SECOND', reset: 1 });
      else expect(res.overallCode).toBe('OVER_LIMIT');
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0, 0]);
  });
});

it('counts a per-minute limit with the seconds until the window resets, and the key in Redis', async () => {
  await inOneWindow(60, async (n) => {
    const value = `pm${run}_${n}`;
    const before = resetNow(60);
    const first = await client.shouldRateLimit(rlsRequest('basic', [[['one_per_minute', value]]]));
    const after = resetNow(60);
    expect(statusOf(first)).toMatchObject({ code: 'OK', remaining: 0, rpu: 1, unit: 'MINUTE' });
    expect([before, after]).toContain(statusOf(first).reset);
    const second = await client.shouldRateLimit(rlsRequest('basic', [[['one_per_minute', value]]]));
    expect(second.overallCode).toBe('OVER_LIMIT');
    expect(statusOf(second)).toMatchObject({
      code: 'OVER_LIMIT',
      remaining: 0,
      rpu: 1,
      unit: 'MINUTE',
    });
    const redisClient = redis.client();
    try {
      const key = `basic_one_per_minute_${value}_${windowStart(60)}`;
      expect(await redisClient.get(key)).toBe('2');
      const ttl = await redisClient.ttl(key);
      expect(ttl).toBeGreaterThan(50);
      expect(ttl).toBeLessThanOrEqual(60);
    } finally {
      redisClient.disconnect();
    }
  });
});

it('counts hour and day limits with hits_addend', async () => {
  await inOneWindow(3600, async (n) => {
    const value = `ph${run}_${n}`;
    const res = await client.shouldRateLimit(
      rlsRequest('basic', [[['per_hour', value]], [['per_day', value]]], 4),
    );
    expect(res.overallCode).toBe('OK');
    expect(statusOf(res, 0)).toMatchObject({ code: 'OK', remaining: 6, rpu: 10, unit: 'HOUR' });
    expect(statusOf(res, 1)).toMatchObject({ code: 'OK', remaining: 16, rpu: 20, unit: 'DAY' });
    const over = await client.shouldRateLimit(
      rlsRequest('basic', [[['per_hour', value]], [['per_day', value]]], 7),
    );
    expect(over.overallCode).toBe('OVER_LIMIT');
    expect(statusOf(over, 0).code).toBe('OVER_LIMIT');
    expect(statusOf(over, 1)).toMatchObject({ code: 'OK', remaining: 9 });
  });
});

it('honours a descriptor hits_addend, 0 checking without counting, and negative hits', async () => {
  await inOneWindow(3600, async (n) => {
    const value = `nh${run}_${n}`;
    const entries = [{ key: 'per_hour', value }];
    const send = (descriptor: Record<string, unknown>, hitsAddend = 0): Promise<WireResponse> =>
      client.shouldRateLimit({
        domain: 'basic',
        descriptors: [{ entries, ...descriptor }],
        hitsAddend,
      });
    expect(statusOf(await send({ hitsAddend: { value: 8 } }, 2)).remaining).toBe(2);
    expect(statusOf(await send({ hitsAddend: { value: 0 } }, 5)).remaining).toBe(2);
    expect(statusOf(await send({ hitsAddend: { value: 3 }, isNegativeHits: true })).remaining).toBe(
      5,
    );
    const refund = await send({ hitsAddend: { value: 100 }, isNegativeHits: true });
    expect(statusOf(refund)).toMatchObject({ code: 'OK', remaining: 10 });
    const redisClient = redis.client();
    try {
      expect(await redisClient.get(`basic_per_hour_${value}_${windowStart(3600)}`)).toBe('0');
    } finally {
      redisClient.disconnect();
    }
  });
});

it('matches nested descriptors, wildcards, share_threshold and replaces', async () => {
  await inOneWindow(3600, async (n) => {
    const v = `${run}_${n}`;
    const nested = await client.shouldRateLimit(
      rlsRequest('basic', [
        [
          ['tier', 'gold'],
          ['user', v],
        ],
        [
          ['tier', 'silver'],
          ['user', v],
        ],
      ]),
    );
    expect(statusOf(nested, 0)).toMatchObject({ code: 'OK', remaining: 2, rpu: 3, unit: 'HOUR' });
    expect(statusOf(nested, 1)).toEqual({
      code: 'OK',
      remaining: 0,
      rpu: undefined,
      unit: undefined,
      reset: undefined,
    });

    const shared = [`/files/${v}/a`, `/files/${v}/b`, `/files/${v}/c`];
    const sharedCodes: (string | undefined)[] = [];
    for (const path of shared)
      sharedCodes.push(
        (await client.shouldRateLimit(rlsRequest('basic', [[['path', path]]]))).overallCode,
      );
    expect(sharedCodes).toEqual(['OK', 'OK', 'OVER_LIMIT']);
    const own = [`/api/${v}/a`, `/api/${v}/b`, `/api/${v}/c`];
    for (const path of own)
      expect(
        statusOf(await client.shouldRateLimit(rlsRequest('basic', [[['path', path]]]))),
      ).toMatchObject({ remaining: 1 });

    const replaced = await client.shouldRateLimit(
      rlsRequest('basic', [[['small', v]], [['big', v]]]),
    );
    expect(statusOf(replaced, 0).rpu).toBeUndefined();
    expect(statusOf(replaced, 1)).toMatchObject({ remaining: 99 });
    const alone = await client.shouldRateLimit(rlsRequest('basic', [[['small', v]]]));
    expect(alone.statuses?.[0]?.currentLimit).toEqual({
      requestsPerUnit: 1,
      unit: 'HOUR',
      name: 'small',
    });
    const redisClient = redis.client();
    try {
      expect(await redisClient.get(`basic_path_/files/*_${windowStart(3600)}`)).not.toBeNull();
      expect(await redisClient.get(`basic_path_/api/${v}/a_${windowStart(3600)}`)).toBe('1');
    } finally {
      redisClient.disconnect();
    }
  });
});

it('answers shadow, unlimited and blocked rules', async () => {
  const v = `su${run}`;
  const res = await client.shouldRateLimit(
    rlsRequest('basic', [[['shadow', v]], [['unlimited', v]]], 5),
  );
  expect(res.overallCode).toBe('OK');
  expect(statusOf(res, 0)).toMatchObject({ code: 'OK', remaining: 0, rpu: 1 });
  expect(res.statuses?.[1]).toEqual({ code: 'OK', limitRemaining: 4294967295 });
  const blocked = await client.shouldRateLimit(rlsRequest('basic', [[['blocked', v]]]));
  expect(blocked.overallCode).toBe('OVER_LIMIT');
  expect(statusOf(blocked)).toMatchObject({ code: 'OVER_LIMIT', unit: 'MINUTE' });
});

it('uses a limit override from the request', async () => {
  await inOneWindow(60, async (n) => {
    const v = `ov${run}_${n}`;
    const request = {
      domain: 'basic',
      descriptors: [
        { entries: [{ key: 'per_hour', value: v }], limit: { requestsPerUnit: 1, unit: 'MINUTE' } },
      ],
    };
    expect(statusOf(await client.shouldRateLimit(request))).toMatchObject({
      code: 'OK',
      rpu: 1,
      unit: 'MINUTE',
    });
    expect((await client.shouldRateLimit(request)).overallCode).toBe('OVER_LIMIT');
  });
});

describe('bad requests get INVALID_ARGUMENT with what was wrong', () => {
  it.each([
    [
      'an empty domain',
      { domain: '', descriptors: [{ entries: [{ key: 'a', value: 'b' }] }] },
      'rate limit domain must not be empty',
    ],
    [
      'no descriptors',
      { domain: 'basic', descriptors: [] },
      'rate limit descriptor list must not be empty',
    ],
    [
      'a limit override without a unit',
      {
        domain: 'basic',
        descriptors: [{ entries: [{ key: 'a', value: 'b' }], limit: { requestsPerUnit: 3 } }],
      },
      'descriptors[0].limit.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR',
    ],
  ])('%s', async (_what, request, details) => {
    const err = await client.error(request);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toBe(details);
  });
});

it('serves the gRPC health service', async () => {
  expect(await client.healthCheck()).toBe('SERVING');
  expect(await client.healthCheck('ratelimit')).toBe('SERVING');
});
