// The StatsSink seam: where flushed statistics go.
import type { StatTags } from './store';

/** A destination for statistics; the flusher calls it once per statistic per flush. */
export interface StatsSink {
  /** The change of a counter since the last flush (never 0). */
  counter(name: string, delta: number): void;
  /** A gauge's value; `tags` are its own fixed tags, written the way the sink writes tags. */
  gauge(name: string, value: number, tags?: StatTags): void;
  /** One timer sample in milliseconds; `sampleRate` < 1 when samples were thinned. */
  timing(name: string, ms: number, sampleRate: number): void;
  /** Sends whatever is buffered. */
  flush(): Promise<void>;
  /** Flushes and releases resources. */
  close(): Promise<void>;
  /**
   * Forgets counters the store released (keys built from request values, idle for a while),
   * for a sink that keeps a series per name; a sink that keeps nothing need not have it.
   */
  release?(names: readonly string[]): void;
  /** Forgets a gauge the store removed, for a sink that keeps a series per gauge. */
  releaseGauge?(name: string, tags: StatTags): void;
}
