// Cluster failover under traffic: CLUSTER FAILOVER on a replica, then a master killed. The
// service follows the new slot owners, decisions on the moved shard resume within 5 s of the
// promotion, errors in between are counted backend errors, and counts stay exact.
import { status } from '@grpc/grpc-js';
import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { RedisCluster, type ClusterMember } from '../helpers/redis-cluster';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { CallStream, type CallRecord } from '../helpers/traffic';
import { windowStart } from '../helpers/windows';

const TIMEOUT_MS = 1000;
const CONFIG = {
  'failover.yaml': `
domain: failover
descriptors:
  - key: per_hour
    rate_limit: { unit: hour, requests_per_unit: 1000000 }
`,
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();
const run = `${process.pid}${Date.now() % 100000}`;
const keyOf = (value: string): string => `failover_per_hour_${value}_${windowStart(3600)}`;
const request = (value: string): unknown => rlsRequest('failover', [[['per_hour', value]]]);

let cluster: RedisCluster;
let service: ServiceProcess;
let client: RlsClient;
let checker: Cluster;
/** Failed calls of earlier tests, for the error statistic. */
let failedBefore = 0;

beforeAll(async () => {
  cluster = await RedisCluster.start();
  cleanup(() => cluster.destroy());
  service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_TYPE: 'cluster',
      REDIS_URL: cluster.seeds(),
      REDIS_TIMEOUT: `${TIMEOUT_MS}ms`,
    },
  });
  cleanup(() => service.stop());
  client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  checker = cluster.client();
  cleanup(() => {
    client.close();
    checker.disconnect();
  });
}, 90_000);

/**
 * Runs traffic over every shard, applies `failover` to the shard `master` serves and checks the
 * service resumed on that shard within 5 s of the promotion and counted exactly afterwards.
 */
async function underTraffic(
  label: string,
  master: ClusterMember,
  failover: () => Promise<{ promotedAtMs: number }>,
): Promise<void> {
  const ranges = await cluster.slotsOf(master);
  const inShard = (c: CallRecord): boolean => {
    const slot = calculateSlot(keyOf(c.value));
    return ranges.some(([from, to]) => slot >= from && slot <= to);
  };
  const stream = new CallStream(client, request, (n) => `${label}${run}_${n}`);
  stream.start();
  let promotedAtMs = 0;
  let resumed: CallRecord;
  try {
    await eventually(() => stream.okAfter(0).filter(inShard).length >= 10, { what: 'traffic' });
    ({ promotedAtMs } = await failover());
    resumed = await eventually(
      () => {
        const first = stream.okAfter(promotedAtMs).find(inShard);
        if (first === undefined) throw new Error('no call on the moved shard answered yet');
        return first;
      },
      { what: 'decisions to resume on the moved shard', timeoutMs: 20_000 },
    );
    await eventually(() => stream.okAfter(resumed.endMs).filter(inShard).length >= 10, {
      what: 'more traffic',
    });
  } finally {
    await stream.stop();
  }
  const resumedMs = resumed.endMs - promotedAtMs;
  const failures = stream.calls.filter((c) => !c.isOk);
  process.stdout.write(
    `cluster ${label}: decisions resumed ${resumedMs} ms after promotion; ${failures.length} calls failed\n`,
  );
  expect(resumedMs).toBeLessThanOrEqual(5000);

  // Every call answered after the promotion is counted once, wherever its slot lives now.
  const after = stream.okAfter(promotedAtMs);
  const values = await Promise.all(after.map((c) => checker.get(keyOf(c.value))));
  expect(values.filter((v) => v !== '1')).toEqual([]);
  expect(after.filter(inShard).length).toBeGreaterThanOrEqual(10);

  for (const f of failures) {
    expect({ code: f.code, details: f.details?.slice(0, 14) }).toEqual({
      code: status.UNAVAILABLE,
      details: 'redis backend:',
    });
  }
  failedBefore += failures.length;
  expect(await service.stat('ratelimit.service.call.should_rate_limit.redis_error')).toBe(
    failedBefore,
  );
  // Never a hang past REDIS_TIMEOUT (the slack is the machine's, not Redis's).
  expect(Math.max(...stream.calls.map((c) => c.endMs - c.startMs))).toBeLessThan(TIMEOUT_MS + 1500);
  expect((await fetch(service.url('/healthcheck'))).status).toBe(200);
}

it('follows CLUSTER FAILOVER on a replica during a stream of calls', async () => {
  const { master, replica } = await cluster.ownerOf(`a${run}`);
  await underTraffic('manual', master, () => cluster.failover(replica));
  // Coordinated: the old master handed over every write, so nothing counted before is lost.
  await cluster.waitUntilHealthy();
});

it('follows the replica promoted after its master is killed', async () => {
  const { master, replica } = await cluster.ownerOf(`b${run}`);
  await underTraffic('kill', master, async () => {
    await master.node.kill();
    return cluster.waitForMaster(replica);
  });
});
