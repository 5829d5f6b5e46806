// The debug listener's index: the service and its version, then every path with its help.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createDebugServer } from '../../../src/server';
import { StatsStore } from '../../../src/stats';

const packageJson = JSON.parse(
  readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
) as { name: string; version: string };

let base: string;
const server = createDebugServer({
  snapshot: () => undefined,
  stats: new StatsStore(),
  health: () => ({ backend: true }),
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

it('names the service and its version, then lists every path with its help, sorted', async () => {
  const res = await fetch(`${base}/`);
  expect(res.status).toBe(200);
  expect((await res.text()).split('\n')).toEqual([
    `${packageJson.name} ${packageJson.version}`,
    '/debug/pprof/: root of the profiling endpoints',
    '/debug/pprof/heap: V8 heap snapshot',
    '/debug/pprof/profile: CPU profiling endpoint',
    '/healthcheck/components: health of each component',
    '/rlconfig: print out the currently loaded configuration for debugging',
    '/stats: print out stats',
    '',
  ]);
});

it('answers each path, 404 for others and 405 for other methods', async () => {
  expect(await (await fetch(`${base}/healthcheck/components`)).json()).toEqual({ backend: true });
  expect(await (await fetch(`${base}/rlconfig`)).text()).toBe('');
  expect((await fetch(`${base}/nothing`)).status).toBe(404);
  expect((await fetch(`${base}/stats`, { method: 'POST' })).status).toBe(405);
});
