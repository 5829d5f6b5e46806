// The built service on BACKEND_TYPE=memcache over two real memcached: decisions, outage, bad keys.
import { status } from '@grpc/grpc-js';
import { crc32 } from '../../src/store/memcached/server-selection';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { MemcachedServer } from '../helpers/memcached-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const CONFIG = {
  'memcached.yaml': `
domain: mc
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: bulk
    rate_limit: { unit: hour, requests_per_unit: 1000000 }
`,
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();
const run = `${process.pid}${Date.now() % 100000}`;

let servers: MemcachedServer[] = [];
let service: ServiceProcess;
let client: RlsClient;

beforeAll(async () => {
  servers = await Promise.all([MemcachedServer.start(), MemcachedServer.start()]);
  cleanup(async () => {
    for (const s of servers) await s.stop();
  });
  service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      // The neutral spellings, to show they select the same backend.
      BACKEND_TYPE: 'altcache',
      ALTCACHE_HOST_PORT: servers.map((s) => s.address).join(','),
      CACHE_KEY_PREFIX: `it${run}_`,
      // Generous, so a loaded machine does not fail a call; a stopped server fails at once.
      MEMCACHE_TIMEOUT: '5s',
    },
  });
  cleanup(() => service.stop());
  client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
    return Promise.resolve();
  });
});

/** The memcached key of `user` in the hour of `atMs`, and the server that holds it. */
function keyOf(
  user: string,
  descriptorKey = 'user',
  atMs = Date.now(),
): { key: string; server: MemcachedServer } {
  const window = Math.floor(atMs / 3_600_000) * 3600;
  const key = `it${run}_mc_${descriptorKey}_${user}_${window}`;
  const server = servers[crc32(key) % 2];
  if (server === undefined) throw new Error('no server');
  return { key, server };
}

it('decides on counts kept on the server CRC-32 of the key names', async () => {
  const user = `u${run}`;
  const request = rlsRequest('mc', [[['user', user]]]);
  const codes: string[] = [];
  for (let i = 0; i < 4; i++)
    codes.push(String((await client.shouldRateLimit(request)).overallCode));
  expect(codes).toEqual(['OK', 'OK', 'OK', 'OVER_LIMIT']);
  const { key, server } = keyOf(user);
  expect((await server.item(key))?.value).toBe('4');
});

/** Calls in a loop until stopped (or 5000 calls), tallying answers by code. */
function callsInBackground(request: unknown): {
  stop(): Promise<Map<string, number>>;
  count(): number;
  readonly tally: ReadonlyMap<string, number>;
} {
  const tally = new Map<string, number>();
  const state = { isStopped: false };
  let calls = 0;
  const loop = (async () => {
    while (!state.isStopped && calls < 5000) {
      calls += 1;
      let outcome: string;
      try {
        outcome = String((await client.shouldRateLimit(request)).overallCode);
      } catch (err: unknown) {
        outcome = `status ${String((err as { code?: unknown }).code)}`;
      }
      tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
    }
  })();
  return {
    stop: async () => {
      state.isStopped = true;
      await loop;
      return tally;
    },
    count: () => calls,
    tally,
  };
}

it('answers UNAVAILABLE and 500 for keys on a server killed under calls, counts it, and recovers', async () => {
  // A user whose key lives on the second server, which is killed and restarted.
  const user = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    .map((i) => `down${run}_${i}`)
    .find((u) => keyOf(u, 'bulk').server === servers[1]);
  if (user === undefined) throw new Error('no user on the second server');
  const request = rlsRequest('mc', [[['bulk', user]]]);
  expect((await client.shouldRateLimit(request)).overallCode).toBe('OK');
  const errorsBefore = await service.stat('ratelimit.service.call.should_rate_limit.redis_error');

  const background = callsInBackground(request);
  await eventually(() => background.count() > 20, { what: 'calls before the kill' });
  await servers[1]?.stop();
  const address = servers[1]?.address ?? '';
  const err = await client.error(request);
  expect(err.code).toBe(status.UNAVAILABLE);
  expect(err.details).toMatch(
    new RegExp(
      `^memcache backend unreachable \\(${address}\\): connection (refused|closed|reset|broken)$`,
    ),
  );
  const http = await service.json({
    domain: 'mc',
    descriptors: [{ entries: [{ key: 'bulk', value: user }] }],
  });
  expect(http.status).toBe(500);
  expect(http.body.error).toBe('STORE_UNAVAILABLE');
  expect(http.body.message).toMatch(new RegExp(`^memcache backend unreachable \\(${address}\\): `));

  await servers[1]?.restart();
  // The calls in the loop alone show the recovery, so every failed call is one the loop saw.
  const okAtRestart = background.tally.get('OK') ?? 0;
  await eventually(() => (background.tally.get('OK') ?? 0) > okAtRestart + 5, {
    what: 'recovery after memcached returns',
  });
  const tally = await background.stop();
  // Every call got an answer: a decision, or UNAVAILABLE while the server was gone.
  expect([...tally.keys()].sort()).toEqual(['OK', `status ${status.UNAVAILABLE}`]);
  const failed = (tally.get(`status ${status.UNAVAILABLE}`) ?? 0) + 2;
  expect(await service.stat('ratelimit.service.call.should_rate_limit.redis_error')).toBe(
    errorsBefore + failed,
  );
  expect(await service.stat('ratelimit.memcache.increment.__code=error')).toBe(failed);
  expect(service.child.exitCode).toBeNull();
  // The outage in the log: a line when the server went away and one when it came back, with
  // every failed call counted; none per call.
  await service.logged(`memcache backend unreachable (${address})`);
  const lines = service.logs.split('\n');
  const away = lines.filter((l) => l.includes(`memcache backend unreachable (${address})`));
  expect(away).toHaveLength(1);
  expect(away[0]).toContain('level=error');
  await eventually(() => service.logs.includes('reachable again'), {
    what: 'the line saying the server is back',
  });
  expect(service.logs).toMatch(
    new RegExp(
      `msg="memcache backend reachable again \\(${address}\\) after \\d+\\.\\d s; ${failed} requests failed meanwhile"`,
    ),
  );
  expect(service.logs).not.toContain('rate limit request failed');
  // Counting resumed on the restarted (empty) server (this hour, or the last if it just turned).
  const counts = await Promise.all(
    [Date.now(), Date.now() - 3_600_000].map(async (atMs) => {
      const { key, server } = keyOf(user, 'bulk', atMs);
      return Number((await server.item(key))?.value ?? 0);
    }),
  );
  expect(Math.max(...counts)).toBeGreaterThan(0);
});

it('refuses a descriptor value memcached cannot hold in a key, with the reason, counted', async () => {
  const refusedBefore = await service.stat('ratelimit.memcache.key_refused');
  const http = await service.json({
    domain: 'mc',
    descriptors: [{ entries: [{ key: 'user', value: 'two words' }] }],
  });
  expect(http.status).toBe(500);
  expect(http.body.error).toBe('STORE_UNAVAILABLE');
  expect(String(http.body.message)).toMatch(
    /^memcache backend: key "it\d+_mc_user_two words_\d+" contains a space at position \d+; memcached keys may not contain spaces or control characters$/,
  );
  expect(await service.stat('ratelimit.memcache.key_refused')).toBe(refusedBefore + 1);
});
