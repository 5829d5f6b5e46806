// The debug listener's index: the service and its version, then every path with its help; a
// browser gets the status page at the same address.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { STAT } from '../../../src/stats';
import { startDebugListener, type DebugListener } from '../../helpers/debug-listener';
import { rawRequest } from '../../helpers/raw-http';

const packageJson = JSON.parse(
  readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'),
) as { name: string; version: string };

let listener: DebugListener;
let profiling: DebugListener;

beforeAll(async () => {
  listener = await startDebugListener(['domain: d\ndescriptors: []\n']);
  profiling = await startDebugListener([], { isProfilingEnabled: true });
});

afterAll(async () => {
  await listener.close();
  await profiling.close();
});

it('names the service and its version, then lists every path with its help, sorted', async () => {
  const res = await listener.get('/');
  expect(res.status).toBe(200);
  expect(res.type).toBe('text/plain; charset=utf-8');
  expect(res.text.split('\n').map((line) => line.replace(/: .*/, ''))).toEqual([
    `${packageJson.name} ${packageJson.version}`,
    '/counters',
    '/debug/pprof/',
    '/debug/pprof/heap',
    '/debug/pprof/profile',
    '/decisions/recent',
    '/health',
    '/healthcheck/components',
    '/rlconfig',
    '/rules',
    '/stats',
    '',
  ]);
  // The reference's lines are unchanged.
  expect(res.text).toContain(
    '/rlconfig: print out the currently loaded configuration for debugging\n',
  );
  expect(res.text).toContain('/stats: print out stats\n');
});

it('answers each path, 404 for others and 405 for other methods', async () => {
  expect((await listener.get('/healthcheck/components')).json()).toEqual({
    backend: true,
    sigterm: true,
  });
  expect((await listener.get('/rlconfig')).text).toBe('');
  expect((await listener.get('/nothing')).status).toBe(404);
  expect((await fetch(`${listener.base}/stats`, { method: 'POST' })).status).toBe(405);
});

it('serves the status page to a browser and its files under /ui/, nothing external', async () => {
  const page = await listener.get('/', 'text/html,application/xhtml+xml,*/*;q=0.8');
  expect(page.status).toBe(200);
  expect(page.type).toBe('text/html; charset=utf-8');
  expect(page.text).toContain('<meta name="viewport"');
  // Every file the page loads comes from this listener: no CDN, no other host.
  expect(page.text).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  const loaded = [...page.text.matchAll(/<(?:script|link)[^>]*(?:src|href)="([^"]+)"/g)].map(
    (m) => m[1]!,
  );
  const files = ['/ui/common.css', '/ui/common.js', '/ui/status.js', '/ui/status-quota.js'];
  expect(loaded.filter((ref) => ref !== 'data:,')).toEqual(files);
  for (const ref of files) {
    const asset = await listener.get(ref);
    expect([ref, asset.status]).toEqual([ref, 200]);
  }
  const res = await fetch(`${listener.base}/`, { headers: { accept: 'text/html' } });
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
  expect((await listener.get('/ui/nothing.js')).status).toBe(404);
  // curl's default Accept keeps the plain index.
  expect((await listener.get('/', '*/*')).type).toBe('text/plain; charset=utf-8');
});

it('answers 400 to a request target with an empty host, and keeps serving', async () => {
  for (const target of ['//', '//:', '//[', 'http://']) {
    const answer = await rawRequest(listener.port, `GET ${target} HTTP/1.1`);
    expect({ target, ...answer }).toMatchObject({
      target,
      status: 400,
    });
  }
  expect((await listener.get('/rlconfig')).status).toBe(200);
});

describe('profiling (DEBUG_PROFILING_ENABLED)', () => {
  it('is off by default: no heap snapshot or profile, and the index says how to turn it on', async () => {
    for (const path of ['/debug/pprof/heap', '/debug/pprof/profile?seconds=1']) {
      const res = await fetch(`${listener.base}${path}`);
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('DEBUG_PROFILING_ENABLED=true');
    }
    expect((await listener.get('/')).text).toContain(
      '/debug/pprof/heap: V8 heap snapshot (off: DEBUG_PROFILING_ENABLED)',
    );
  });

  it('takes one profile at a time, at most 60 seconds long', async () => {
    expect((await fetch(`${profiling.base}/debug/pprof/profile?seconds=61`)).status).toBe(400);
    const first = fetch(`${profiling.base}/debug/pprof/profile?seconds=1`);
    const second = await fetch(`${profiling.base}/debug/pprof/heap`);
    expect(second.status).toBe(409);
    const profile = await first;
    expect(profile.status).toBe(200);
    expect(JSON.parse(await profile.text())).toHaveProperty('nodes');
  });
});

it('answers 500 to an error nothing expected, counts and logs it, and keeps serving', async () => {
  const failing = await startDebugListener([]);
  const stats = failing.stats;
  // A statistics store that breaks while /stats reads it: a bug the last resort catches.
  stats.snapshot = () => {
    throw new Error('broken snapshot');
  };
  try {
    expect((await failing.get('/stats')).status).toBe(500);
    expect((await failing.get('/rlconfig')).status).toBe(200);
    expect(stats.counter(STAT.unexpectedError).value).toBe(1);
    expect(failing.logger.lines.map((l) => l.fields?.error)).toEqual(['broken snapshot']);
  } finally {
    await failing.close();
  }
});
