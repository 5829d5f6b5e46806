// The counter-store and decision suites against every Redis mode on real servers (backends project):
// sentinel, cluster (plain and TLS), a TLS-only server, and per-second instances in other modes.
import { makeCertificates, type Certificates } from '../../helpers/certs';
import { collectCleanups } from '../../helpers/cleanups';
import { RedisCluster } from '../../helpers/redis-cluster';
import { RedisServer } from '../../helpers/redis-server';
import { TlsRedis, tlsEnv } from '../../helpers/redis-tls';
import { SentinelSet } from '../../helpers/sentinel-set';
import { openRedisFixture, type StoreFixture } from '../../helpers/stores';
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
