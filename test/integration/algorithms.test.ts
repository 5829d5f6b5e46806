// The built service as a process with sliding windows, token buckets, two limits on one
// descriptor and IETF headers, on the memory backend and on Redis, over gRPC and HTTP /json;
// the keys in Redis and /counters on the debug listener checked too.
import { parseList } from 'structured-headers';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { grpcTransport, httpTransport, req, type Transport } from '../helpers/transports';
import { inOneWindow, windowStart } from '../helpers/windows';

const CONFIG = {
  'beyond.yaml': `
domain: beyond
descriptors:
  - key: slide
    rate_limit: { unit: hour, requests_per_unit: 10, algorithm: sliding_window }
  - key: bucket
    rate_limit: { unit: hour, requests_per_unit: 2, algorithm: token_bucket, burst: 3 }
  - key: two
    rate_limit: { unit: hour, requests_per_unit: 10 }
    rate_limits:
      - { unit: day, requests_per_unit: 3, name: per_day }
`,
};

let redis: RedisServer;
let runtime: RuntimeDir;
const services: Record<string, ServiceProcess> = {};
const transports: Transport[] = [];
const run = `${process.pid}${Date.now() % 100000}`;

beforeAll(async () => {
  redis = await RedisServer.start();
  runtime = new RuntimeDir(CONFIG);
  const env = {
    ...runtime.env(),
    LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
    LIMIT_RESPONSE_HEADERS_FORMAT: 'ietf',
  };
  const [memory, onRedis] = await Promise.all([
    ServiceProcess.start({ env: { ...env, BACKEND_TYPE: 'memory' } }),
    ServiceProcess.start({ env: { ...env, REDIS_URL: `127.0.0.1:${redis.port}` } }),
  ]);
  services.memory = memory;
  services.redis = onRedis;
});

afterAll(async () => {
  for (const t of transports) t.close();
  await Promise.all(Object.values(services).map((s) => s.stop()));
  await redis.destroy();
  runtime.destroy();
});

async function redisGet(key: string): Promise<string | null> {
  const client = redis.client();
  try {
    return await client.get(key);
  } finally {
    client.disconnect();
  }
}

const cases = ['memory', 'redis'].flatMap((backend) =>
  ['grpc', 'http'].map((transport) => [backend, transport] as const),
);

describe.each(cases)('%s backend over %s', (backend, transportName) => {
  let t: Transport;
  beforeAll(() => {
    const service = services[backend];
    if (service === undefined) throw new Error(`no ${backend} service`);
    t =
      transportName === 'grpc'
        ? grpcTransport(service.ports.grpc)
        : httpTransport(service.ports.http);
    transports.push(t);
  });
  const v = (label: string, n: number): string => `${label}${run}_${backend}_${transportName}_${n}`;

  it('a token bucket admits its burst, refuses without cost, and says when it is full', async () => {
    const value = v('tb', 0);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await t.send(req('beyond', [[['bucket', value]]])));
    // T = 30 min, a bucket of 3: three admitted, the fourth refused; full again in 90 min.
    expect(answers.map((a) => [a.overallCode, a.statuses[0]?.remaining])).toEqual([
      ['OK', 2],
      ['OK', 1],
      ['OK', 0],
      ['OVER_LIMIT', 0],
    ]);
    expect([5399, 5400]).toContain(answers[3]?.statuses[0]?.reset);
    if (backend === 'redis') {
      const tat = Number(await redisGet(`beyond_bucket_${value}_tat_hour`));
      expect(Math.abs(tat - (Date.now() * 1000 + 5400e6))).toBeLessThan(5e6);
    }
  });

  it('a sliding window counts as the fixed window does, on the fixed-window keys', async () => {
    await inOneWindow(3600, async (n) => {
      const value = v('sw', n);
      const first = await t.send(req('beyond', [[['slide', value]]], 6));
      const second = await t.send(req('beyond', [[['slide', value]]], 6));
      expect([first, second].map((a) => [a.overallCode, a.statuses[0]?.remaining])).toEqual([
        ['OK', 4],
        ['OVER_LIMIT', 0],
      ]);
      if (backend === 'redis') {
        expect(await redisGet(`beyond_slide_${value}_${windowStart(3600)}`)).toBe('12');
      }
    });
  });

  it('two limits: the one with fewest remaining, then the one that refused, in IETF fields', async () => {
    await inOneWindow(3600, async (n) => {
      const value = v('two', n);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await t.send(req('beyond', [[['two', value]]])));
      expect(
        answers.map((a) => [a.overallCode, a.statuses[0]?.unit, a.statuses[0]?.remaining]),
      ).toEqual([
        ['OK', 'DAY', 2],
        ['OK', 'DAY', 1],
        ['OK', 'DAY', 0],
        ['OVER_LIMIT', 'DAY', 0],
      ]);
      const headers = new Map(answers[0]?.responseHeaders ?? []);
      const items = (name: string) =>
        parseList(headers.get(name) ?? '').map(([item, params]) => [
          item,
          Object.fromEntries(params),
        ]);
      expect(items('RateLimit-Policy')).toEqual([
        ['beyond.two', { q: 10, w: 3600 }],
        ['per_day', { q: 3, w: 86400 }],
      ]);
      expect(items('RateLimit').map(([name, p]) => [name, (p as { r: number }).r])).toEqual([
        ['beyond.two', 9],
        ['per_day', 2],
      ]);
    });
  });
});

it('weighs the previous window of a sliding window, as /counters shows (Redis)', async () => {
  const service = services.redis;
  if (service === undefined) throw new Error('no redis service');
  await inOneWindow(3600, async (n) => {
    const value = `prev${run}_${n}`;
    // The previous hour counted 8: the estimate now is 8 × (1 − elapsed) + this request's 1.
    const client = redis.client();
    await client.set(`beyond_slide_${value}_${windowStart(3600) - 3600}`, '8', 'EX', 7200);
    client.disconnect();
    const weight = () => 1 - (Date.now() / 1000 - windowStart(3600)) / 3600;
    const before = 10 - Math.ceil(8 * weight() + 1);
    const t = grpcTransport(service.ports.grpc);
    transports.push(t);
    const answer = await t.send(req('beyond', [[['slide', value]]]));
    const after = 10 - Math.ceil(8 * weight() + 1);
    expect([before, after]).toContain(answer.statuses[0]?.remaining);
    const params = new URLSearchParams({ domain: 'beyond', descriptor: `slide=${value}` });
    const res = await fetch(service.debugUrl(`/counters?${params.toString()}`));
    const body = (await res.json()) as {
      descriptors: { counters: Record<string, unknown>[] }[];
    };
    expect(body.descriptors[0]?.counters[0]).toMatchObject({
      algorithm: 'sliding_window',
      count: 1,
      previousCount: 8,
      previousKey: `beyond_slide_${value}_${windowStart(3600) - 3600}`,
    });
  });
});
