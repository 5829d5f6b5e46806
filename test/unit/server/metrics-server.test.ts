// The Prometheus scrape listener: a malformed request target is a 400, never a crash.
import type { AddressInfo } from 'node:net';
import { MemoryLogger } from '../../../src/lib/logger';
import { createMetricsServer } from '../../../src/server';
import { LastResort } from '../../../src/server/last-resort';
import { STAT, StatsStore } from '../../../src/stats';
import { rawRequest } from '../../helpers/raw-http';

async function listen(server: ReturnType<typeof createMetricsServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

it('answers 400 to a request target with an empty host, and keeps serving', async () => {
  const server = createMetricsServer('/metrics', {
    render: () => Promise.resolve({ contentType: 'text/plain', body: 'up 1\n' }),
  });
  const port = await listen(server);
  try {
    for (const target of ['//', '//:', '//[', 'http://']) {
      expect({ target, ...(await rawRequest(port, `GET ${target} HTTP/1.1`)) }).toMatchObject({
        target,
        status: 400,
      });
    }
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toBe('up 1\n');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it('answers 500 when answering fails unexpectedly, and counts it', async () => {
  const stats = new StatsStore();
  const server = createMetricsServer(
    '/metrics',
    {
      // A render whose result breaks the answer: its content type cannot be a header.
      render: () => Promise.resolve({ contentType: 'text/plain\nbad', body: '' }),
    },
    { lastResort: new LastResort(stats, new MemoryLogger()) },
  );
  const port = await listen(server);
  try {
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(500);
    expect(stats.counter(STAT.unexpectedError).value).toBe(1);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
