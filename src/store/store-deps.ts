// What every backend may use when it opens, besides its own settings.
import type { Tracer } from '@opentelemetry/api';
import type { Clock } from '../lib/clock';
import type { Logger } from '../lib/logger';
import type { StatsStore } from '../stats';
import type { InstanceGuard } from './breaker/breaker-store';
import type { CounterStore } from './counter-store';

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
  /**
   * Puts one backend instance behind its circuit breaker (BACKEND_FAILURE_*); every opener calls
   * it once per instance it opens (Redis: the main and the per-second one). Absent or the
   * identity while breakers are off.
   */
  readonly guard?: InstanceGuard;
  /**
   * With tracing on, the tracer of the spans around each round trip to the backend; absent
   * while tracing is off, and then nothing is added per call.
   */
  readonly tracer?: Tracer;
}

/** `store` behind the breaker `deps` asks for (one instance named `instance`), or as it is. */
export function guarded(store: CounterStore, instance: string, deps: StoreDeps): CounterStore {
  return deps.guard === undefined ? store : deps.guard(store, instance);
}
