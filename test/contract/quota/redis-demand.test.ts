// Replicas' demand shared through real Redis servers in every mode the service supports:
// a single server (with credentials re-read from a file), a Sentinel set and a Cluster.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../src/lib/logger';
import { RedisDemandShare, type RemoteClaim } from '../../../src/quota';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';
import { RedisCluster } from '../../helpers/redis-cluster';
import { RedisServer } from '../../helpers/redis-server';
import { SentinelSet } from '../../helpers/sentinel-set';
import { redisSettings } from '../../helpers/stores';

const cleanup = collectCleanups();
let single: RedisServer;
let sentinel: SentinelSet;
let cluster: RedisCluster;
const dir = mkdtempSync(path.join(tmpdir(), 'rl-quota-'));
const authFile = path.join(dir, 'auth');

function track<T extends { destroy(): Promise<void> | void }>(started: T): T {
  cleanup(() => started.destroy());
  return started;
}

beforeAll(async () => {
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(authFile, 'secret-pass\n');
  [single, sentinel, cluster] = await Promise.all([
    RedisServer.start({ password: 'secret-pass' }).then(track),
    SentinelSet.start().then(track),
    RedisCluster.start().then(track),
  ]);
}, 120_000);

const TTL_MS = 400;

async function open(env: Record<string, string>, replicaId: string): Promise<RedisDemandShare> {
  const backend = redisSettings(env);
  const share = await RedisDemandShare.open({
    instance: backend.main,
    startup: backend.startup,
    logger: silentLogger,
    keyPrefix: `t${process.pid}_`,
    ttlMs: TTL_MS,
    replicaId,
  });
  cleanup(() => share.close());
  return share;
}

const claims = (...items: [string, number | undefined][]): RemoteClaim[] =>
  items.map(([id, demandPerSecond]) => ({ id, demandPerSecond }));

const modes: [string, () => Record<string, string>][] = [
  [
    'single, credentials from a file',
    () => ({ REDIS_URL: `127.0.0.1:${single.port}`, REDIS_AUTH_FILE: authFile }),
  ],
  ['sentinel', () => ({ REDIS_TYPE: 'sentinel', REDIS_URL: sentinel.url })],
  ['cluster', () => ({ REDIS_TYPE: 'cluster', REDIS_URL: cluster.seeds() })],
];

describe.each(modes)('%s', (_name, env) => {
  test('each replica reads the others, not itself; an empty list withdraws; silence expires', async () => {
    const bucket = `b${Math.random().toString(36).slice(2)}`;
    const a = await open(env(), 'A');
    const b = await open(env(), 'B');
    expect(await a.exchange(new Map([[bucket, claims(['A/1', 10])]]))).toEqual(new Map());
    expect(await b.exchange(new Map([[bucket, claims(['B/1', 20], ['B/2', undefined])]]))).toEqual(
      new Map([[bucket, claims(['A/1', 10])]]),
    );
    expect(await a.exchange(new Map([[bucket, claims(['A/1', 12])]]))).toEqual(
      new Map([[bucket, claims(['B/1', 20], ['B/2', undefined])]]),
    );
    // B withdraws; A alone again.
    await b.exchange(new Map([[bucket, []]]));
    expect(await a.exchange(new Map([[bucket, claims(['A/1', 12])]]))).toEqual(new Map());
    // A goes silent: B stops seeing it once A's entry is older than its TTL.
    await eventually(
      async () => (await b.exchange(new Map([[bucket, claims(['B/1', 1])]]))).size === 0,
      { timeoutMs: 5000, what: "A's demand to expire" },
    );
  });

  test('many buckets in one exchange (on a cluster, on many slots); closing withdraws', async () => {
    // Past two of the script calls a single server's exchange is split into.
    const buckets = Array.from(
      { length: 450 },
      (_, i) => `many${i}_${Math.random().toString(36).slice(2)}`,
    );
    const a = await open(env(), 'A');
    const b = await open(env(), 'B');
    await a.exchange(new Map(buckets.map((k, i) => [k, claims([`A/${i}`, i])])));
    const seen = await b.exchange(new Map(buckets.map((k) => [k, claims(['B/1', 1])])));
    expect([...seen.keys()].sort()).toEqual([...buckets].sort());
    expect(seen.get(buckets[3] ?? '')).toEqual(claims(['A/3', 3]));
    expect(seen.get(buckets[420] ?? '')).toEqual(claims(['A/420', 420]));
    await a.close();
    expect((await b.exchange(new Map(buckets.map((k) => [k, claims(['B/1', 1])])))).size).toBe(0);
  });
});

test('a replica that cannot reach Redis is refused at start, naming the instance', async () => {
  const env = {
    REDIS_URL: '127.0.0.1:1',
    REDIS_STARTUP_INITIAL_INTERVAL: '50ms',
    REDIS_STARTUP_MAX_ELAPSED_TIME: '200ms',
  };
  await expect(open(env, 'X')).rejects.toThrow(/cannot connect to tcp 127\.0\.0\.1:1/);
});
