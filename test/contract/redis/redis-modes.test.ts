// The counter-store and decision suites against every Redis mode on real servers (backends project):
// sentinel, cluster (plain and TLS), a TLS-only server, and per-second instances in other modes;
// in a cluster, each algorithm's keys on their slot owners and the token bucket script per node.
import { makeCertificates, type Certificates } from '../../helpers/certs';
import { collectCleanups } from '../../helpers/cleanups';
import { TOKEN_BUCKET_SHA } from '../../../src/store/redis/commands';
import { RedisCluster, type ClusterMember } from '../../helpers/redis-cluster';
import { RedisServer } from '../../helpers/redis-server';
import { TlsRedis, tlsEnv } from '../../helpers/redis-tls';
import { SentinelSet } from '../../helpers/sentinel-set';
import { openRedisFixture, type StoreFixture } from '../../helpers/stores';
import { algorithmStoreBehaviour } from '../algorithm-store-behaviour';
import { counterStoreBehaviour } from '../counter-store-behaviour';
import { decisionBehaviour } from '../decision-behaviour';

const cleanup = collectCleanups();
let certs: Certificates;
let sentinel: SentinelSet;
let cluster: RedisCluster;
let tlsRedis: TlsRedis;
let plain: RedisServer;

/** Stops what was started after the last test, whatever else failed to start. */
function track<T extends { destroy(): Promise<void> | void }>(started: T): T {
  cleanup(() => started.destroy());
  return started;
}

beforeAll(async () => {
  certs = track(makeCertificates('127.0.0.1'));
  // Started together: the slowest, the cluster, sets the pace.
  [sentinel, cluster, tlsRedis, plain] = await Promise.all([
    SentinelSet.start().then(track),
    RedisCluster.start({ tls: certs }).then(track),
    TlsRedis.start(certs).then(track),
    RedisServer.start().then(track),
  ]);
}, 120_000);

const modes: [string, () => Promise<StoreFixture>][] = [
  [
    'sentinel',
    async () =>
      openRedisFixture('sentinel', { REDIS_TYPE: 'sentinel', REDIS_URL: sentinel.url }, [
        (await sentinel.master()).client(),
      ]),
  ],
  [
    'cluster',
    () =>
      openRedisFixture('cluster', { REDIS_TYPE: 'cluster', REDIS_URL: cluster.seeds() }, [
        cluster.client(),
      ]),
  ],
  [
    'cluster over TLS',
    () =>
      openRedisFixture(
        'cluster+tls',
        { REDIS_TYPE: 'cluster', REDIS_URL: cluster.seeds('tls'), ...tlsEnv('REDIS_', certs) },
        [cluster.client()],
      ),
  ],
  [
    'single over TLS',
    () =>
      openRedisFixture(
        'tls',
        { REDIS_URL: `127.0.0.1:${tlsRedis.port}`, ...tlsEnv('REDIS_', certs) },
        [tlsRedis.node.client()],
      ),
  ],
  [
    'single with a per-second cluster',
    () =>
      openRedisFixture(
        'single+cluster',
        {
          REDIS_URL: `127.0.0.1:${plain.port}`,
          REDIS_PERSECOND: 'true',
          REDIS_PERSECOND_TYPE: 'cluster',
          REDIS_PERSECOND_URL: cluster.seeds(),
        },
        [plain.client(), cluster.client()],
      ),
  ],
  [
    'sentinel with a per-second TLS single',
    async () =>
      openRedisFixture(
        'sentinel+tls',
        {
          REDIS_TYPE: 'sentinel',
          REDIS_URL: sentinel.url,
          REDIS_PERSECOND: 'true',
          REDIS_PERSECOND_URL: `127.0.0.1:${tlsRedis.port}`,
          ...tlsEnv('REDIS_PERSECOND_', certs),
        },
        [(await sentinel.master()).client(), tlsRedis.node.client()],
      ),
  ],
];

for (const [name, make] of modes) {
  counterStoreBehaviour(name, make);
  algorithmStoreBehaviour(name, make);
  decisionBehaviour(name, make);
}

describe('split instances', () => {
  it('keep per-second keys on the per-second instance only, each in its own mode', async () => {
    const f = await openRedisFixture(
      'split',
      {
        REDIS_TYPE: 'sentinel',
        REDIS_URL: sentinel.url,
        REDIS_PERSECOND: 'true',
        REDIS_PERSECOND_TYPE: 'cluster',
        REDIS_PERSECOND_URL: cluster.seeds('tls'),
        ...tlsEnv('REDIS_PERSECOND_', certs),
      },
      [],
    );
    const main = (await sentinel.master()).client();
    const second = cluster.client();
    try {
      const key = `split_${process.pid}_${Date.now()}`;
      expect(
        await f.store.increment([
          { key: `${key}_s`, hits: 2, ttlSeconds: 1, isPerSecond: true, isNegative: false },
          { key: `${key}_h`, hits: 3, ttlSeconds: 3600, isPerSecond: false, isNegative: false },
        ]),
      ).toEqual([2, 3]);
      expect(await second.get(`${key}_s`)).toBe('2');
      expect(await main.get(`${key}_s`)).toBeNull();
      expect(await main.get(`${key}_h`)).toBe('3');
      expect(await second.get(`${key}_h`)).toBeNull();
    } finally {
      main.disconnect();
      second.disconnect();
      await f.close();
    }
  });
});

/** Keys with distinct slot owners, one per master, named from `prefix`. */
async function keysPerMaster(prefix: string): Promise<Map<ClusterMember, string>> {
  const byMaster = new Map<ClusterMember, string>();
  for (let i = 0; i < 200 && byMaster.size < 3; i++) {
    const key = `${prefix}_${String(i)}`;
    const { master } = await cluster.ownerOf(key);
    if (!byMaster.has(master)) byMaster.set(master, key);
  }
  expect(byMaster.size).toBe(3);
  return byMaster;
}

describe('a cluster slot that moves', () => {
  it('counts on the new owner when the node the store still names answers MOVED', async () => {
    const f = await openRedisFixture(
      'cluster',
      {
        REDIS_TYPE: 'cluster',
        REDIS_URL: cluster.seeds(),
      },
      [],
    );
    const key = `moved_${process.pid}_${Date.now()}`;
    const inc = { key, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false };
    const { master: from } = await cluster.ownerOf(key);
    const to = [...(await keysPerMaster(`movedto_${process.pid}`)).keys()].find((m) => m !== from);
    if (to === undefined) throw new Error('a second master is needed');
    const slot = Number(await from.node.command('CLUSTER', 'KEYSLOT', key));
    const movedReplies = async (): Promise<number> => {
      const info = String(await from.node.command('INFO', 'errorstats'));
      return Number(/errorstat_MOVED:count=(\d+)/.exec(info)?.[1] ?? '0');
    };
    try {
      // The first call has the store learn the slot table and connect to the owner.
      expect(await f.store.increment([inc])).toEqual([1]);
      await cluster.moveSlot(slot, from, to);
      const movedBefore = await movedReplies();
      // The store still sends the key's commands to `from`, which answers MOVED; they are sent
      // again through the cluster client and count once, on the new owner.
      expect(await f.store.increment([inc])).toEqual([2]);
      expect(await movedReplies()).toBeGreaterThan(movedBefore);
      expect(await to.node.command('GET', key)).toBe('2');
      expect(Number(await to.node.command('TTL', key))).toBeGreaterThan(50);
    } finally {
      await cluster.moveSlot(slot, to, from);
      await f.close();
    }
  });
});

describe('algorithms in a cluster', () => {
  const clusterFixture = (): Promise<StoreFixture> =>
    openRedisFixture('cluster', { REDIS_TYPE: 'cluster', REDIS_URL: cluster.seeds() }, []);

  it("sends a sliding window's two keys to their own slot owners in one call", async () => {
    const f = await clusterFixture();
    try {
      const [previous, current] = [...(await keysPerMaster(`swc_${process.pid}_${Date.now()}`))];
      if (previous === undefined || current === undefined) throw new Error('two masters needed');
      await f.store.increment([
        { key: previous[1], hits: 4, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]);
      const change = {
        current: {
          key: current[1],
          hits: 3,
          ttlSeconds: 120,
          isPerSecond: false,
          isNegative: false,
        },
        previousKey: previous[1],
      };
      expect(await f.store.slidingWindow([change])).toEqual([{ previous: 4, current: 3 }]);
      // Each node answers for its own keys only (any other would say MOVED).
      expect(await previous[0].node.command('GET', previous[1])).toBe('4');
      expect(await current[0].node.command('GET', current[1])).toBe('3');
      expect(Number(await current[0].node.command('TTL', current[1]))).toBeGreaterThan(110);
    } finally {
      await f.close();
    }
  });

  it('runs token buckets on their slot owners, loading the script on each node once', async () => {
    const f = await clusterFixture();
    const owners = await keysPerMaster(`tbc_${process.pid}_${Date.now()}`);
    const step = (key: string) => ({
      key,
      hits: 1,
      nowUs: 1_700_000_000_000_000,
      emissionUs: 1_000_000,
      toleranceUs: 5_000_000,
      isPerSecond: false,
      isNegative: false,
    });
    const calls = async (m: ClusterMember): Promise<string> => {
      const info = String(await m.node.command('INFO', 'commandstats'));
      const count = (name: string): string =>
        new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? '0';
      return `evalsha=${count('evalsha')} eval=${count('eval')}`;
    };
    try {
      for (const master of owners.keys()) {
        await master.node.command('SCRIPT', 'FLUSH');
        await master.node.command('CONFIG', 'RESETSTAT');
      }
      const keys = [...owners.values()];
      const twice = [...keys, ...keys].map(step);
      expect((await f.store.tokenBucket(twice)).map((s) => s.isAdmitted)).toEqual(
        twice.map(() => true),
      );
      await f.store.tokenBucket(keys.map(step));
      for (const [master, key] of owners) {
        expect(await master.node.command('GET', key)).toBe(
          String(1_700_000_000_000_000 + 3_000_000),
        );
        expect(await master.node.command('SCRIPT', 'EXISTS', TOKEN_BUCKET_SHA)).toEqual([1]);
        // Two refused by NOSCRIPT in the first pipeline, each sent again by EVAL; then EVALSHA.
        expect(await calls(master)).toBe('evalsha=3 eval=2');
      }
    } finally {
      await f.close();
    }
  });
});
