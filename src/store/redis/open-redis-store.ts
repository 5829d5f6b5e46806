// Opening the Redis backend as the settings describe it: notices, connection, health.
import type { Logger } from '../../lib/logger';
import type { RedisBackendSettings } from '../../settings';
import type { CounterStore } from '../counter-store';
import { PerSecondSplitStore } from '../split-store';
import { guarded, type StoreDeps } from '../store-deps';
import { RedisCounterStore } from './redis-store';

/** REDIS_POOL_SIZE's default; any other value is worth a notice, as it changes nothing here. */
const REFERENCE_POOL_SIZE = 10;

/** Settings of the reference's connection pools that mean nothing with one pipelined connection. */
function noticeIgnoredPoolSettings(settings: RedisBackendSettings, logger: Logger): void {
  for (const instance of [settings.main, settings.perSecond]) {
    if (instance === undefined) continue;
    const { settingPrefix: prefix } = instance;
    if (instance.poolSize !== REFERENCE_POOL_SIZE) {
      logger.info(
        `${prefix}POOL_SIZE has no effect: one pipelined connection per ${instance.type === 'cluster' ? 'node' : 'instance'} serves all requests`,
      );
    }
    if (instance.type === 'cluster' && instance.clusterPipelineParallelism !== 1) {
      logger.info(
        `${prefix}CLUSTER_PIPELINE_PARALLELISM has no effect: the commands of each event-loop turn go to every node at once, one pipeline per node`,
      );
    }
  }
}

/** With REDIS_HEALTH_CHECK_ACTIVE_CONNECTION, health follows the connection to Redis. */
function followConnection(store: CounterStore, report: (isConnected: boolean) => void): void {
  report(store.isConnected());
  store.onConnectionChange(report);
}

/**
 * With breakers on and REDIS_PERSECOND set, each instance is opened as its own store behind its
 * own breaker; otherwise one store serves both, as before.
 */
async function openInstances(
  settings: RedisBackendSettings,
  deps: StoreDeps,
): Promise<CounterStore> {
  // IAM tokens are signed at the service's clock.
  const open = (s: RedisBackendSettings, isPerSecondOnly = false): Promise<RedisCounterStore> =>
    RedisCounterStore.open(s, deps.logger, deps.stats, { clock: deps.clock, isPerSecondOnly });
  const perSecond = settings.perSecond;
  if (deps.guard === undefined || perSecond === undefined)
    return guarded(await open(settings), 'redis', deps);
  const main = await open({ ...settings, perSecond: undefined });
  let second: RedisCounterStore;
  try {
    second = await open({ ...settings, main: perSecond, perSecond: undefined }, true);
  } catch (err: unknown) {
    await main.close();
    throw err;
  }
  return new PerSecondSplitStore(
    guarded(main, 'redis', deps),
    guarded(second, 'redis_per_second', deps),
  );
}

/** Connects (retrying as REDIS_STARTUP_* says); rejects with a StoreError when it gives up. */
export async function openRedisStore(
  settings: RedisBackendSettings,
  deps: StoreDeps,
): Promise<CounterStore> {
  noticeIgnoredPoolSettings(settings, deps.logger);
  const store = await openInstances(settings, deps);
  if (settings.healthCheckActiveConnection) followConnection(store, deps.reportHealth);
  return store;
}
