// Loaded into each server the bench measures (`node -r`): notes every garbage collection's
// start and length and, as the process exits, writes them to BENCH_GC_DIR/<pid>.json, so the
// bench can add up the GC time of its measured window. It changes nothing else in the process.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';

/** What the file holds: flat pairs of start (ms since the epoch) and length (ms). */
export type GcEvents = number[];

const dir = process.env.BENCH_GC_DIR;
if (dir !== undefined && dir !== '') {
  const events: GcEvents = [];
  const note = (entries: readonly PerformanceEntry[]): void => {
    for (const entry of entries) {
      events.push(performance.timeOrigin + entry.startTime, entry.duration);
    }
  };
  const observer = new PerformanceObserver((list) => {
    note(list.getEntries());
  });
  observer.observe({ entryTypes: ['gc'] });
  process.once('exit', () => {
    note(observer.takeRecords());
    writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(events));
  });
}
