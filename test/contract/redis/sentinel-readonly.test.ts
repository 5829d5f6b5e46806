// Sentinel mode and READONLY: a demoted master the client still reaches answers READONLY; with
// REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR the connection is closed and the next command goes to
// the master the sentinels name now. The failing request still gets its error.
import { silentLogger } from '../../../src/lib/logger';
import { RedisCounterStore } from '../../../src/store';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';
import { SentinelSet } from '../../helpers/sentinel-set';
import { inc, rejection } from '../../helpers/store-calls';
import { redisSettings } from '../../helpers/stores';

const cleanup = collectCleanups();
const run = `${process.pid}_${Date.now()}`;
let set: SentinelSet;

beforeAll(async () => {
  set = await SentinelSet.start({ replicas: 1, sentinels: 1 });
  cleanup(() => set.destroy());
});

async function open(env: Record<string, string> = {}): Promise<RedisCounterStore> {
  const store = await RedisCounterStore.open(
    redisSettings({ REDIS_TYPE: 'sentinel', REDIS_URL: set.url, REDIS_TIMEOUT: '1s', ...env }),
    silentLogger,
  );
  cleanup(() => store.close());
  return store;
}

it('leaves a demoted master after READONLY with the setting, and keeps failing without', async () => {
  const closing = await open({ REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR: 'true' });
  const keeping = await open();
  expect(await closing.increment([inc(`before_${run}`)])).toEqual([1]);
  expect(await keeping.increment([inc(`before_${run}`)])).toEqual([2]);

  // Swap the roles behind the clients' backs (no CLIENT KILL, unlike a sentinel failover), then
  // tell the sentinel who the master is.
  const [oldMaster, newMaster] = set.dataNodes;
  if (oldMaster === undefined || newMaster === undefined) throw new Error('two data nodes');
  await newMaster.command('REPLICAOF', 'NO', 'ONE');
  await oldMaster.command('REPLICAOF', '127.0.0.1', newMaster.port);
  for (const sentinel of set.sentinelNodes) {
    await sentinel.command('SENTINEL', 'REMOVE', set.masterName);
    await sentinel.command('SENTINEL', 'MONITOR', set.masterName, '127.0.0.1', newMaster.port, 1);
  }

  const key = `after_${run}`;
  const err = await rejection(closing.increment([inc(key)]));
  expect(err.message).toMatch(/^redis backend: READONLY /);
  expect(err.isTransient).toBe(true);
  // The next commands reach the new master.
  await eventually(async () => (await closing.increment([inc(key)]))[0] !== undefined, {
    what: 'the store to reach the new master',
  });
  const check = newMaster.client();
  try {
    expect(Number(await check.get(key))).toBeGreaterThanOrEqual(1);
  } finally {
    check.disconnect();
  }

  // Without the setting the connection stays on the demoted master.
  for (let i = 0; i < 3; i++) {
    expect((await rejection(keeping.increment([inc(key)]))).message).toMatch(/READONLY/);
  }
});
