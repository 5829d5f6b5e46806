// The HTTP front end's last resort: an error nothing expected answers 500 on both /json paths.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RateLimitResponse } from '../../../src/engine';
import { MemoryLogger } from '../../../src/lib/logger';
import { createHttpHandler, HealthState, LastResort } from '../../../src/server';
import { DEFAULT_REQUEST_LIMITS } from '../../../src/settings';
import { STAT, StatsStore } from '../../../src/stats';

const BODY = JSON.stringify({
  domain: 'd',
  descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
});

it('answers 500 when building the /json answer throws, on the fast path and through express', async () => {
  const stats = new StatsStore();
  const broken = {} as RateLimitResponse;
  Object.defineProperty(broken, 'overallCode', {
    get: () => {
      throw new Error('a bug while answering');
    },
  });
  const server = http.createServer(
    createHttpHandler({
      engine: { shouldRateLimit: () => Promise.resolve(broken) },
      health: new HealthState({ requireConfig: false }),
      logger: new MemoryLogger(),
      limits: DEFAULT_REQUEST_LIMITS,
      lastResort: new LastResort(stats, new MemoryLogger()),
      tracer: undefined,
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/json`;
  try {
    // A length-delimited body takes the fast path; a streamed (chunked) one goes to express.
    const plain = await fetch(url, { method: 'POST', body: BODY });
    const chunked = await fetch(url, {
      method: 'POST',
      body: new Blob([BODY]).stream(),
      duplex: 'half',
    });
    for (const res of [plain, chunked]) {
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'INTERNAL', message: 'internal error' });
    }
    expect(stats.counter(STAT.unexpectedError).value).toBe(2);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
