// What every backend may use when it opens, besides its own settings.
import type { Clock } from '../lib/clock';
import type { Logger } from '../lib/logger';
import type { StatsStore } from '../stats';

export interface StoreDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where a backend reports its connection statistics. */
  readonly stats: StatsStore;
  /**
   * Told whether the backend is connected, when the settings make that part of health
   * (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION); a backend that does not follow it never calls.
   */
  readonly reportHealth: (isConnected: boolean) => void;
}
