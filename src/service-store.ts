// The counter store the service counts in: the backend the settings name, each instance behind
// its circuit breaker (BACKEND_FAILURE_*), with a span per round trip when tracing is on.
import type { Clock } from './lib/clock';
import type { Logger } from './lib/logger';
import type { HealthState } from './server';
import type { Settings } from './settings';
import type { StatsStore } from './stats';
import { breakerGuard, createStore, type CounterStore } from './store';
import type { Tracing } from './tracing';

export interface ServiceStoreParts {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stats: StatsStore;
  /** Told of the backend connection and of each breaker's state. */
  readonly health: HealthState;
  readonly tracing: Tracing | undefined;
}

/** Connects as the settings say; rejects with the store's error when it gives up. */
export async function openServiceStore(
  settings: Settings,
  parts: ServiceStoreParts,
): Promise<CounterStore> {
  const { clock, logger, stats, health, tracing } = parts;
  return createStore(settings.backend, {
    clock,
    logger,
    stats,
    reportHealth: (isConnected) => {
      health.set('backend', isConnected);
    },
    guard: breakerGuard(settings.breaker, {
      clock,
      logger,
      stats,
      report: (instance, state) => {
        health.setBreaker(instance, state);
      },
    }),
    // With tracing off the engine holds the store itself: nothing is added per call.
    ...(tracing === undefined ? {} : { tracer: tracing.tracer }),
  });
}
