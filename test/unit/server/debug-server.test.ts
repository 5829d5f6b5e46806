// The debug listener's index: the service and its version, then every path with its help.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { MemoryLogger } from '../../../src/lib/logger';
import { createDebugServer } from '../../../src/server';
import { LastResort } from '../../../src/server/last-resort';
import { STAT, StatsStore } from '../../../src/stats';
import { rawRequest } from '../../helpers/raw-http';

const packageJson = JSON.parse(
  readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
) as { name: string; version: string };

function debugServer(isProfilingEnabled: boolean) {
  const stats = new StatsStore();
  const logger = new MemoryLogger();
  const server = createDebugServer(
    { snapshot: () => undefined, stats, health: () => ({ backend: true }) },
    { isProfilingEnabled, lastResort: new LastResort(stats, logger) },
  );
  return { server, stats, logger };
}

let base: string;
let port: number;
const { server } = debugServer(true);
const off = debugServer(false);
let offBase: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  await new Promise<void>((resolve) => off.server.listen(0, '127.0.0.1', resolve));
  offBase = `http://127.0.0.1:${(off.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => off.server.close(resolve));
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

it('answers 400 to a request target with an empty host, and keeps serving', async () => {
  for (const target of ['//', '//:', '//[', 'http://']) {
    expect({ target, ...(await rawRequest(port, `GET ${target} HTTP/1.1`)) }).toMatchObject({
      target,
      status: 400,
    });
  }
  expect((await fetch(`${base}/rlconfig`)).status).toBe(200);
});

describe('profiling (DEBUG_PROFILING_ENABLED)', () => {
  it('is off by default: no heap snapshot or profile, and the index says how to turn it on', async () => {
    for (const path of ['/debug/pprof/heap', '/debug/pprof/profile?seconds=1']) {
      const res = await fetch(`${offBase}${path}`);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('DEBUG_PROFILING_ENABLED=true');
    }
    expect(await (await fetch(`${offBase}/`)).text()).toContain(
      '/debug/pprof/heap: V8 heap snapshot (off: DEBUG_PROFILING_ENABLED)',
    );
  });

  it('takes one profile at a time, at most 60 seconds long', async () => {
    expect((await fetch(`${base}/debug/pprof/profile?seconds=61`)).status).toBe(400);
    const first = fetch(`${base}/debug/pprof/profile?seconds=1`);
    const second = await fetch(`${base}/debug/pprof/heap`);
    expect(second.status).toBe(409);
    const profile = await first;
    expect(profile.status).toBe(200);
    expect(JSON.parse(await profile.text())).toHaveProperty('nodes');
  });
});

it('answers 500 to an error nothing expected, counts and logs it, and keeps serving', async () => {
  const failing = debugServer(false);
  const stats = failing.stats;
  // A statistics store that breaks while /stats reads it: a bug the last resort catches.
  stats.snapshot = () => {
    throw new Error('broken snapshot');
  };
  await new Promise<void>((resolve) => failing.server.listen(0, '127.0.0.1', resolve));
  const at = `http://127.0.0.1:${(failing.server.address() as AddressInfo).port}`;
  try {
    expect((await fetch(`${at}/stats`)).status).toBe(500);
    expect((await fetch(`${at}/rlconfig`)).status).toBe(200);
    expect(stats.counter(STAT.unexpectedError).value).toBe(1);
    expect(failing.logger.lines.map((l) => l.fields?.error)).toEqual(['broken snapshot']);
  } finally {
    await new Promise((resolve) => failing.server.close(resolve));
  }
});
