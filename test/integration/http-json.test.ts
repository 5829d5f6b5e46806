// POST /json and GET /healthcheck of the built server, on the embedded memory backend.
import http from 'node:http';
import zlib from 'node:zlib';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { inOneWindow } from '../helpers/windows';

const CONFIG = {
  'web.yaml': `
domain: web
descriptors:
  - key: remote_address
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: unlimited
    rate_limit: { unlimited: true }
`,
};

let runtime: RuntimeDir;
let service: ServiceProcess;
const run = `${process.pid}${Date.now() % 100000}`;

beforeAll(async () => {
  runtime = new RuntimeDir(CONFIG);
  service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
      LIMIT_REQUEST_HEADERS_ENABLED: 'true',
      LIMIT_PER_UNIT_HEADERS_ENABLED: 'true',
    },
  });
});

afterAll(async () => {
  await service.stop();
  runtime.destroy();
});

function body(
  domain: string,
  pairs: [string, string][][],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    domain,
    descriptors: pairs.map((entries) => ({
      entries: entries.map(([key, value]) => ({ key, value })),
    })),
    ...extra,
  };
}

it('answers 200 with proto3 JSON, then 429 once over the limit', async () => {
  await inOneWindow(60, async (n) => {
    const ip = `10.0.${n}.${run.length}`;
    const first = await service.json(body('web', [[['remote_address', `${ip}-${run}`]]]));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      overallCode: 'OK',
      statuses: [
        { code: 'OK', currentLimit: { requestsPerUnit: 2, unit: 'MINUTE' }, limitRemaining: 1 },
      ],
    });
    expect(
      String((first.body.statuses as Record<string, unknown>[])[0]?.durationUntilReset),
    ).toMatch(/^\d+s$/);
    await service.json(body('web', [[['remote_address', `${ip}-${run}`]]]));
    const third = await service.json(body('web', [[['remote_address', `${ip}-${run}`]]]));
    expect(third.status).toBe(429);
    const status = (third.body.statuses as Record<string, unknown>[])[0];
    expect(third.body.overallCode).toBe('OVER_LIMIT');
    expect(status).toMatchObject({
      code: 'OVER_LIMIT',
      currentLimit: { requestsPerUnit: 2, unit: 'MINUTE' },
    });
    // proto3 JSON leaves zero values out.
    expect(status).not.toHaveProperty('limitRemaining');
  });
});

it('accepts proto field names and string numbers, as proto3 JSON parsers do', async () => {
  const res = await service.json({
    domain: 'web',
    descriptors: [{ entries: [{ key: 'per_hour', value: `snake-${run}` }], hits_addend: '3' }],
    hits_addend: 1,
  });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ statuses: [{ limitRemaining: 7 }] });
});

it('adds the rate limit headers', async () => {
  const res = await service.json(body('web', [[['per_hour', `h-${run}`]], [['unlimited', 'x']]]));
  expect(res.body.responseHeadersToAdd).toEqual([
    { key: 'RateLimit-Limit', value: '10' },
    { key: 'RateLimit-Remaining', value: '9' },
    { key: 'RateLimit-Reset', value: expect.stringMatching(/^\d+$/) as unknown },
    { key: 'RateLimit-Limit-Hours', value: '10' },
    { key: 'RateLimit-Remaining-Hours', value: '9' },
  ]);
  expect(res.body.requestHeadersToAdd).toHaveLength(3);
  expect((res.body.statuses as unknown[])[1]).toEqual({ code: 'OK', limitRemaining: 4294967295 });
});

describe('bad bodies get 400 with what was wrong', () => {
  it.each([
    ['not JSON', 'domain=web', 'BAD_REQUEST', /^the body is not valid JSON/],
    ['a JSON array', '[]', 'BAD_REQUEST', /^the request must be a JSON object$/],
    [
      'an unknown field',
      JSON.stringify({ domain: 'web', descriptors: [], colour: 'red' }),
      'BAD_REQUEST',
      /^the request has an unknown field "colour"$/,
    ],
    [
      'a wrong type',
      JSON.stringify({ domain: 7, descriptors: [] }),
      'BAD_REQUEST',
      /^domain must be a string$/,
    ],
    [
      'entries not a list',
      JSON.stringify({ domain: 'web', descriptors: [{ entries: {} }] }),
      'BAD_REQUEST',
      /^descriptors\[0\]\.entries must be a JSON array$/,
    ],
    [
      'an empty domain',
      JSON.stringify({ domain: '', descriptors: [{ entries: [] }] }),
      'EMPTY_DOMAIN',
      /^rate limit domain must not be empty$/,
    ],
    [
      'no descriptors',
      JSON.stringify({ domain: 'web' }),
      'NO_DESCRIPTORS',
      /^rate limit descriptor list must not be empty$/,
    ],
    [
      'a negative hits_addend',
      JSON.stringify({ domain: 'web', descriptors: [{ entries: [] }], hitsAddend: -1 }),
      'BAD_REQUEST',
      /^hits_addend must be a whole number/,
    ],
  ])('%s', async (_what, text, code, message) => {
    const res = await fetch(service.url('/json'), { method: 'POST', body: text });
    expect(res.status).toBe(400);
    const parsed = (await res.json()) as { error: string; message: string };
    expect(parsed.error).toBe(code);
    expect(parsed.message).toMatch(message);
  });

  it('refuses a body over the size limit with 413', async () => {
    const res = await fetch(service.url('/json'), {
      method: 'POST',
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(res.status).toBe(413);
  });

  it('refuses other methods with 405', async () => {
    const res = await fetch(service.url('/json'));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('answers the same whichever way the body arrives', () => {
  /** A raw POST /json: length-delimited bodies take the fast path, the rest go to express. */
  function post(
    payload: Buffer,
    headers: http.OutgoingHttpHeaders,
  ): Promise<{ status: number; type: string | undefined; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: '127.0.0.1', port: service.ports.http, path: '/json', method: 'POST', headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({
              status: res.statusCode ?? 0,
              type: res.headers['content-type'],
              body: JSON.parse(Buffer.concat(chunks).toString()) as unknown,
            });
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  it.each([
    ['with a length (fast path)', (b: Buffer) => ({ 'content-length': b.length })],
    ['chunked (express)', () => ({ 'transfer-encoding': 'chunked' })],
    [
      'with a latin-1 charset (express)',
      (b: Buffer) => ({ 'content-length': b.length, 'content-type': 'text/plain; charset=latin1' }),
    ],
  ])('%s', async (_how, headers) => {
    const text = Buffer.from(JSON.stringify(body('web', [[['unlimited', `ways-${run}`]]])));
    const answer = await post(text, headers(text));
    expect(answer).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: {
        overallCode: 'OK',
        statuses: [{ code: 'OK', limitRemaining: 4294967295 }],
      },
    });
  });

  it('gzip-encoded (express inflates it)', async () => {
    const text = zlib.gzipSync(JSON.stringify(body('web', [[['unlimited', `gz-${run}`]]])));
    const answer = await post(text, { 'content-length': text.length, 'content-encoding': 'gzip' });
    expect(answer.status).toBe(200);
  });

  it('a bad body on the fast path gets the same 400 as through express', async () => {
    const text = Buffer.from('[]');
    const fast = await post(text, { 'content-length': text.length });
    const slow = await post(text, { 'transfer-encoding': 'chunked' });
    expect(fast).toEqual(slow);
    expect(fast.status).toBe(400);
  });
});

it('answers the health check', async () => {
  const res = await fetch(service.url('/healthcheck'));
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('OK');
});
