// The HTTP front end's request limits: MAX_REQUEST_BYTES on both /json paths (a body with a
// length and a streamed one), and the descriptor limits as 400s naming the setting.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RateLimitResponse } from '../../../src/engine';
import { MemoryLogger } from '../../../src/lib/logger';
import { createHttpHandler, HealthState, LastResort } from '../../../src/server';
import { DEFAULT_REQUEST_LIMITS } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';

const LIMITS = { ...DEFAULT_REQUEST_LIMITS, maxRequestBytes: 1024, maxDescriptors: 2 };
const OK: RateLimitResponse = {
  overallCode: 'OK',
  statuses: [],
  responseHeadersToAdd: [],
  requestHeadersToAdd: [],
  dynamicMetadata: undefined,
};

let server: http.Server;
let url: string;

beforeAll(async () => {
  server = http.createServer(
    createHttpHandler({
      engine: { shouldRateLimit: () => Promise.resolve(OK) },
      health: new HealthState({ requireConfig: false }),
      logger: new MemoryLogger(),
      limits: LIMITS,
      lastResort: new LastResort(new StatsStore(), new MemoryLogger()),
      tracer: undefined,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/json`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A /json body of exactly `bytes` bytes: one descriptor whose value pads it out. */
function bodyOf(bytes: number): string {
  const empty = JSON.stringify({
    domain: 'd',
    descriptors: [{ entries: [{ key: 'k', value: '' }] }],
  });
  return empty.replace('"value":""', `"value":"${'v'.repeat(bytes - empty.length)}"`);
}

it('takes a body of MAX_REQUEST_BYTES and refuses one byte more with 413, sent either way', async () => {
  for (const [bytes, status] of [
    [1024, 200],
    [1025, 413],
  ] as const) {
    const body = bodyOf(bytes);
    expect(Buffer.byteLength(body)).toBe(bytes);
    const plain = await fetch(url, { method: 'POST', body });
    const chunked = await fetch(url, {
      method: 'POST',
      body: new Blob([body]).stream(),
      duplex: 'half',
    });
    expect([bytes, plain.status, chunked.status]).toEqual([bytes, status, status]);
  }
});

it('refuses more descriptors than MAX_DESCRIPTORS_PER_REQUEST with 400 naming the setting', async () => {
  const entries = [{ key: 'k', value: 'v' }];
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ domain: 'd', descriptors: [{ entries }, { entries }, { entries }] }),
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { message: string }).message).toContain(
    'MAX_DESCRIPTORS_PER_REQUEST',
  );
});
