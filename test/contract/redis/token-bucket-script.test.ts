// The token bucket script on Redis: sent by EVALSHA, loaded again after NOSCRIPT, and counting
// every hit once across a SCRIPT FLUSH (backends project: needs redis-server).
import { TOKEN_BUCKET_SHA } from '../../../src/store/redis/commands';
import { RedisServer } from '../../helpers/redis-server';
import { redisFixture } from '../../helpers/stores';

let redis: RedisServer;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

const NOW_US = 1_700_000_000_000_000;
const step = (key: string) => ({
  key,
  hits: 1,
  nowUs: NOW_US,
  emissionUs: 1_000_000,
  toleranceUs: 5_000_000,
  isPerSecond: false,
  isNegative: false,
});

async function evalCalls(client: ReturnType<RedisServer['client']>): Promise<{
  evalsha: number;
  eval: number;
}> {
  const info = await client.info('commandstats');
  const calls = (name: string): number =>
    Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
  return { evalsha: calls('evalsha'), eval: calls('eval') };
}

it('loads the script on the first NOSCRIPT, then runs it by EVALSHA alone', async () => {
  const f = await redisFixture(redis);
  const client = redis.client();
  try {
    await client.script('FLUSH');
    await client.config('RESETSTAT');
    const key = `tb_script_${process.pid}`;
    expect(await f.store.tokenBucket([step(key)])).toEqual([
      { isAdmitted: true, tatUs: NOW_US + 1_000_000 },
    ]);
    expect(await client.script('EXISTS', TOKEN_BUCKET_SHA)).toEqual([1]);
    expect(await evalCalls(client)).toEqual({ evalsha: 1, eval: 1 });
    await f.store.tokenBucket([step(key)]);
    await f.store.tokenBucket([step(key)]);
    expect(await evalCalls(client)).toEqual({ evalsha: 3, eval: 1 });

    // After a flush (a restart or a failover looks the same) the next step reloads it once,
    // and the refused EVALSHA ran nothing: every hit is counted once.
    await client.script('FLUSH');
    await Promise.all([f.store.tokenBucket([step(key)]), f.store.tokenBucket([step(key)])]);
    expect(Number(await client.get(key))).toBe(NOW_US + 5_000_000);
    expect(await client.script('EXISTS', TOKEN_BUCKET_SHA)).toEqual([1]);
  } finally {
    client.disconnect();
    await f.close();
  }
});
