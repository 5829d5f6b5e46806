// Loaded into each server the bench measures (`node -r`): notes every garbage collection's
// start and length and, as the process exits, writes them to BENCH_GC_DIR/<pid>.json, so the
// bench can add up the GC time of its measured window. On SIGUSR2 it runs a full collection
// (see below); it changes nothing else in the process.
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

// A server that has had a full collection is in the state it keeps for the rest of its life:
// from then on node:http2's map of a connection's streams, promoted by that collection, keeps
// every later stream and what hangs off it alive into the old generation (docs/performance.md).
// Whether a server's own first collection falls before its window, inside it or after it
// differs from one server to the next, so the bench gives every server one, half a second
// into the load's warm-up (bench/run.ts says why not sooner), by SIGUSR2 (`--expose-gc` comes
// with this probe).
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
});
