// The RLQS quota service of this process: demand shared through the backend the settings name
// (Redis) or kept to this replica, rules taken from every snapshot the provider delivers,
// ticking until the service stops.
import type { ConfigProvider } from './provider';
import type { Clock } from './lib/clock';
import type { Logger } from './lib/logger';
import {
  MemoryDemandShare,
  QuotaService,
  QuotaStats,
  RedisDemandShare,
  type QuotaDemandShare,
} from './quota';
import type { Settings } from './settings';
import type { StatsStore } from './stats';

export interface ServiceQuotaParts {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stats: StatsStore;
}

/** How replicas share demand: through Redis, or not at all. */
async function demandShare(settings: Settings, logger: Logger): Promise<QuotaDemandShare> {
  const backend = settings.backend;
  if (backend.type === 'redis') {
    return RedisDemandShare.open({
      instance: backend.main,
      startup: backend.startup,
      logger,
      keyPrefix: settings.limiter.cacheKeyPrefix,
      ttlMs: settings.quota.shareTtlMs,
    });
  }
  // Memory: one replica (settings refuse WORKERS above 1 with it). Memcache: budgets are
  // refused with the configuration, blanket rules need no sharing.
  return new MemoryDemandShare();
}

/** Opens the quota service (connecting to Redis when it shares through it) and starts it. */
export async function openServiceQuota(
  settings: Settings,
  parts: ServiceQuotaParts,
): Promise<QuotaService> {
  const share = await demandShare(settings, parts.logger);
  const service = new QuotaService({
    clock: parts.clock,
    share,
    limits: settings.quota,
    logger: parts.logger,
    stats: new QuotaStats(parts.stats),
  });
  service.start();
  return service;
}

/** The provider, each snapshot's quota rules handed to the quota service before the rest. */
export function followingQuota(provider: ConfigProvider, quota: QuotaService): ConfigProvider {
  return {
    start: (listener) =>
      provider.start({
        onSnapshot: (snapshot, origin) => {
          quota.setRules(snapshot.quotaRules);
          listener.onSnapshot(snapshot, origin);
        },
        onRejected: (errors, origin) => {
          listener.onRejected(errors, origin);
        },
      }),
    stop: () => provider.stop(),
  };
}
