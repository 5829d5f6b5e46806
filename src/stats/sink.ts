// The StatsSink seam: where flushed statistics go.

/** A destination for statistics; the flusher calls it once per statistic per flush. */
export interface StatsSink {
  /** The change of a counter since the last flush (never 0). */
  counter(name: string, delta: number): void;
  gauge(name: string, value: number): void;
  /** One timer sample in milliseconds; `sampleRate` < 1 when samples were thinned. */
  timing(name: string, ms: number, sampleRate: number): void;
  /** Sends whatever is buffered. */
  flush(): Promise<void>;
  /** Flushes and releases resources. */
  close(): Promise<void>;
}
