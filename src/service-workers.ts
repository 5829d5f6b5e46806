// WORKERS above 1: a worker's statistics as the supervisor collects them, and the sums of every
// worker for the one that serves the debug listener.
import { serveStats, statsTotals, type PlainStats } from './cluster';
import type { ListenerOptions } from './server';
import type { StatsSnapshot, StatsStore } from './stats';

function plain({ counters, gauges }: StatsSnapshot): PlainStats {
  return { counters: [...counters], gauges: [...gauges] };
}

/**
 * Answers the supervisor with this worker's statistics; the worker that serves debug gets the
 * sums of every worker for `/stats` (and the status page, which reads it). Nothing without one.
 */
export function workerStatistics(
  worker: { readonly index: number } | undefined,
  stats: StatsStore,
): Pick<ListenerOptions, 'statsTotals'> {
  if (worker === undefined) return {};
  serveStats(() => plain(stats.snapshot()));
  if (worker.index !== 0) return {};
  return {
    statsTotals: async () => {
      const totals = await statsTotals();
      const snapshot = {
        counters: new Map(totals.stats.counters),
        gauges: new Map(totals.stats.gauges),
      };
      return { snapshot, workers: totals.workers };
    },
  };
}
