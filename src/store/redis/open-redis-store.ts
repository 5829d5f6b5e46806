// Opening the Redis backend as the settings describe it: notices, connection, health.
import type { Logger } from '../../lib/logger';
import type { RedisBackendSettings } from '../../settings';
import type { CounterStore } from '../counter-store';
import { PerSecondSplitStore } from '../split-store';
import { guarded, type StoreDeps } from '../store-deps';
import { RedisCounterStore } from './redis-store';

/** REDIS_POOL_SIZE's default; any other value is worth a notice, as it changes nothing here. */
const REFERENCE_POOL_SIZE = 10;

function noticeIgnoredPoolSize(settings: RedisBackendSettings, logger: Logger): void {
  for (const instance of [settings.main, settings.perSecond]) {
    if (instance !== undefined && instance.poolSize !== REFERENCE_POOL_SIZE) {
      logger.info(
        `${instance.settingPrefix}POOL_SIZE has no effect: one pipelined connection per instance serves all requests`,
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
  const perSecond = settings.perSecond;
  if (deps.guard === undefined || perSecond === undefined)
    return guarded(await RedisCounterStore.open(settings, deps.logger, deps.stats), 'redis', deps);
  const main = await RedisCounterStore.open(
    { ...settings, perSecond: undefined },
    deps.logger,
    deps.stats,
  );
  let second: RedisCounterStore;
  try {
    second = await RedisCounterStore.open(
      { ...settings, main: perSecond, perSecond: undefined },
      deps.logger,
      deps.stats,
      { isPerSecondOnly: true },
    );
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
  noticeIgnoredPoolSize(settings, deps.logger);
  const store = await openInstances(settings, deps);
  if (settings.healthCheckActiveConnection) followConnection(store, deps.reportHealth);
  return store;
}
