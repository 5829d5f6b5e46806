// The built server as a process, Redis beside it, the reference's decision scenarios driven
// over gRPC and over HTTP /json alike, with keys and TTLs checked in Redis.
import { resetNow } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import {
  grpcTransport,
  httpTransport,
  req,
  type Status,
  type Transport,
} from '../helpers/transports';
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
  - key: files_grpc
    value: /files/*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: files_http
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
  - key: meta
    metadata: { team: payments, tags: [a, b] }
    rate_limit: { unit: hour, requests_per_unit: 100 }
`,
};

let redis: RedisServer;
let runtime: RuntimeDir;
let service: ServiceProcess;
const transports: Record<string, Transport> = {};
const run = `${process.pid}${Date.now() % 100000}`;

beforeAll(async () => {
  redis = await RedisServer.start();
  runtime = new RuntimeDir(CONFIG);
  service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_SOCKET_TYPE: 'tcp',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
      RESPONSE_DYNAMIC_METADATA: 'true',
    },
  });
  transports.grpc = grpcTransport(service.ports.grpc);
  transports.http = httpTransport(service.ports.http);
});

afterAll(async () => {
  for (const t of Object.values(transports)) t.close();
  await service.stop();
  await redis.destroy();
  runtime.destroy();
});

async function redisValue(key: string): Promise<{ value: string | null; ttl: number }> {
  const client = redis.client();
  try {
    return { value: await client.get(key), ttl: await client.ttl(key) };
  } finally {
    client.disconnect();
  }
}

const NO_LIMIT: Status = {
  code: 'OK',
  remaining: 0,
  rpu: undefined,
  unit: undefined,
  name: undefined,
  reset: undefined,
};

describe.each(['grpc', 'http'])('over %s', (name) => {
  const t = (): Transport => {
    const transport = transports[name];
    if (transport === undefined) throw new Error(`no ${name} transport`);
    return transport;
  };
  const v = (label: string, n = 0): string => `${label}${run}_${name}_${n}`;

  it('counts a per-second limit down to OVER_LIMIT', async () => {
    await inOneWindow(1, async (n) => {
      const value = v('ps', n);
      const answers = [];
      for (let i = 0; i < 6; i++)
        answers.push(await t().send(req('basic', [[['per_second', value]]])));
      expect(answers.map((a) => [a.overallCode, a.statuses[0]?.remaining])).toEqual([
        ['OK', 4],
        ['OK', 3],
        ['OK', 2],
        ['OK', 1],
        ['OK', 0],
        ['OVER_LIMIT', 0],
      ]);
      expect(answers[0]?.statuses[0]).toMatchObject({ rpu: 5, unit: 'SECOND', reset: 1 });
    });
  });

  it('counts a per-minute limit with the seconds to reset, and keeps the key and TTL in Redis', async () => {
    await inOneWindow(60, async (n) => {
      const value = v('pm', n);
      const before = resetNow(60);
      const first = await t().send(req('basic', [[['one_per_minute', value]]]));
      const after = resetNow(60);
      expect(first.statuses[0]).toMatchObject({ code: 'OK', remaining: 0, rpu: 1, unit: 'MINUTE' });
      expect([before, after]).toContain(first.statuses[0]?.reset);
      const second = await t().send(req('basic', [[['one_per_minute', value]]]));
      expect(second.overallCode).toBe('OVER_LIMIT');
      expect(second.statuses[0]).toMatchObject({
        code: 'OVER_LIMIT',
        remaining: 0,
        rpu: 1,
        unit: 'MINUTE',
      });
      const stored = await redisValue(`basic_one_per_minute_${value}_${windowStart(60)}`);
      expect(stored.value).toBe('2');
      expect(stored.ttl).toBeGreaterThan(50);
      expect(stored.ttl).toBeLessThanOrEqual(60);
    });
  });

  it('counts hour and day limits with the request hits_addend', async () => {
    await inOneWindow(3600, async (n) => {
      const value = v('ph', n);
      const res = await t().send(req('basic', [[['per_hour', value]], [['per_day', value]]], 4));
      expect(res.statuses.map((s) => [s.code, s.remaining, s.rpu, s.unit])).toEqual([
        ['OK', 6, 10, 'HOUR'],
        ['OK', 16, 20, 'DAY'],
      ]);
      const over = await t().send(req('basic', [[['per_hour', value]], [['per_day', value]]], 7));
      expect(over.overallCode).toBe('OVER_LIMIT');
      expect(over.statuses.map((s) => [s.code, s.remaining])).toEqual([
        ['OVER_LIMIT', 0],
        ['OK', 9],
      ]);
      expect(
        (await redisValue(`basic_per_hour_${value}_${windowStart(3600)}`)).ttl,
      ).toBeGreaterThan(3500);
      expect((await redisValue(`basic_per_day_${value}_${windowStart(86400)}`)).value).toBe('11');
    });
  });

  it('honours a descriptor hits_addend, 0 checking without counting, and negative hits', async () => {
    await inOneWindow(3600, async (n) => {
      const value = v('nh', n);
      const entries = [['per_hour', value]] as const;
      const send = async (
        descriptor: { hitsAddend?: number; isNegativeHits?: boolean },
        hitsAddend?: number,
      ): Promise<number | undefined> =>
        (
          await t().send({
            domain: 'basic',
            descriptors: [{ entries, ...descriptor }],
            ...(hitsAddend === undefined ? {} : { hitsAddend }),
          })
        ).statuses[0]?.remaining;
      expect(await send({ hitsAddend: 8 }, 2)).toBe(2);
      expect(await send({ hitsAddend: 0 }, 5)).toBe(2);
      expect(await send({ hitsAddend: 3, isNegativeHits: true })).toBe(5);
      expect(await send({ hitsAddend: 100, isNegativeHits: true })).toBe(10);
      expect((await redisValue(`basic_per_hour_${value}_${windowStart(3600)}`)).value).toBe('0');
    });
  });

  it('matches nested descriptors, wildcards, share_threshold and replaces', async () => {
    await inOneWindow(3600, async (n) => {
      const value = v('m', n);
      const nested = await t().send(
        req('basic', [
          [
            ['tier', 'gold'],
            ['user', value],
          ],
          [
            ['tier', 'silver'],
            ['user', value],
          ],
        ]),
      );
      expect(nested.statuses[0]).toMatchObject({ code: 'OK', remaining: 2, rpu: 3, unit: 'HOUR' });
      expect(nested.statuses[1]).toEqual(NO_LIMIT);
      const shared: string[] = [];
      for (const path of ['a', 'b', 'c'])
        shared.push(
          (await t().send(req('basic', [[[`files_${name}`, `/files/${value}/${path}`]]])))
            .overallCode,
        );
      expect(shared).toEqual(['OK', 'OK', 'OVER_LIMIT']);
      for (const path of ['a', 'b', 'c']) {
        expect(
          (await t().send(req('basic', [[['path', `/api/${value}/${path}`]]]))).statuses[0]
            ?.remaining,
        ).toBe(1);
      }
      const replaced = await t().send(req('basic', [[['small', value]], [['big', value]]]));
      expect(replaced.statuses[0]).toEqual(NO_LIMIT);
      expect(replaced.statuses[1]?.remaining).toBe(99);
      const alone = await t().send(req('basic', [[['small', value]]]));
      expect(alone.statuses[0]).toMatchObject({ rpu: 1, unit: 'HOUR', name: 'small' });
      expect((await redisValue(`basic_path_/api/${value}/a_${windowStart(3600)}`)).value).toBe('1');
    });
  });

  it('answers shadow, unlimited and blocked rules', async () => {
    const value = v('su');
    const res = await t().send(req('basic', [[['shadow', value]], [['unlimited', value]]], 5));
    expect(res.overallCode).toBe('OK');
    expect(res.statuses[0]).toMatchObject({ code: 'OK', remaining: 0, rpu: 1 });
    expect(res.statuses[1]).toEqual({ ...NO_LIMIT, remaining: 4294967295 });
    const blocked = await t().send(req('basic', [[['blocked', value]]]));
    expect(blocked.overallCode).toBe('OVER_LIMIT');
    expect(blocked.statuses[0]).toMatchObject({ code: 'OVER_LIMIT', rpu: 0, unit: 'MINUTE' });
  });

  it('uses a limit override from the request', async () => {
    await inOneWindow(60, async (n) => {
      const request = {
        domain: 'basic',
        descriptors: [
          {
            entries: [['per_hour', v('ov', n)]] as const,
            limit: { requestsPerUnit: 1, unit: 'MINUTE' },
          },
        ],
      };
      expect((await t().send(request)).statuses[0]).toMatchObject({
        code: 'OK',
        rpu: 1,
        unit: 'MINUTE',
      });
      expect((await t().send(request)).overallCode).toBe('OVER_LIMIT');
    });
  });

  it('adds the rate limit headers and dynamic metadata', async () => {
    await inOneWindow(3600, async (n) => {
      const res = await t().send(
        req('basic', [[['meta', v('md', n)]], [['per_hour', v('md', n)]]], 2),
      );
      expect(res.responseHeaders).toEqual([
        ['RateLimit-Limit', '10'],
        ['RateLimit-Remaining', '8'],
        ['RateLimit-Reset', String(res.statuses[1]?.reset)],
      ]);
      expect(res.dynamicMetadata).toEqual({
        domain: 'basic',
        descriptors: [{ entries: [`meta=${v('md', n)}`] }, { entries: [`per_hour=${v('md', n)}`] }],
        hitsAddend: 2,
        metadata: { team: 'payments', tags: ['a', 'b'] },
      });
    });
  });

  describe('bad requests are refused with what was wrong', () => {
    const status = name === 'grpc' ? 'INVALID_ARGUMENT' : '400';
    it.each([
      [
        'an empty domain',
        { domain: '', descriptors: [{ entries: [['a', 'b']] as const }] },
        'rate limit domain must not be empty',
      ],
      [
        'no descriptors',
        { domain: 'basic', descriptors: [] },
        'rate limit descriptor list must not be empty',
      ],
      [
        'a limit override with a unit the protocol lacks',
        {
          domain: 'basic',
          descriptors: [
            { entries: [['a', 'b']] as const, limit: { requestsPerUnit: 3, unit: 'WEEK' } },
          ],
        },
        'descriptors[0].limit.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR',
      ],
    ])('%s', async (_what, request, message) => {
      expect(await t().failure(request)).toEqual({ status, message });
    });
  });
});
