// Opening the Redis backend as the settings describe it: notices, connection, health.
import type { Logger } from '../../lib/logger';
import type { RedisBackendSettings } from '../../settings';
import type { CounterStore } from '../counter-store';
import type { StoreDeps } from '../store-deps';
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

/** Connects (retrying as REDIS_STARTUP_* says); rejects with a StoreError when it gives up. */
export async function openRedisStore(
  settings: RedisBackendSettings,
  deps: StoreDeps,
): Promise<CounterStore> {
  noticeIgnoredPoolSettings(settings, deps.logger);
  // IAM tokens are signed at the service's clock.
  const store = await RedisCounterStore.open(settings, deps.logger, deps.stats, {
    clock: deps.clock,
  });
  if (settings.healthCheckActiveConnection) followConnection(store, deps.reportHealth);
  return store;
}
