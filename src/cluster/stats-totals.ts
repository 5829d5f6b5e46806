// The statistics of every worker as one: what /stats and the status page show with WORKERS.
import type { PlainStats } from './messages';

/**
 * Counters are summed over the workers, as the supervisor's Prometheus scrape sums them. Gauges
 * are summed too, but a gauge with tags in its name (`name.__key=value`, an info-style gauge of
 * 1 such as `ratelimit.build_info`) is the same in every worker and taken once, as the scrape
 * takes an `_info` metric's largest value.
 */
export function sumStats(all: readonly PlainStats[]): PlainStats {
  const counters = new Map<string, number>();
  const gauges = new Map<string, number>();
  for (const stats of all) {
    for (const [name, value] of stats.counters)
      counters.set(name, (counters.get(name) ?? 0) + value);
    for (const [name, value] of stats.gauges) {
      const before = gauges.get(name);
      const isInfo = name.includes('.__');
      gauges.set(
        name,
        before === undefined ? value : isInfo ? Math.max(before, value) : before + value,
      );
    }
  }
  return { counters: [...counters], gauges: [...gauges] };
}
