// The GC time of a measured window, from what bench/gc-probe.ts wrote as each server exited.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { GcEvents } from './gc-probe';

/** The node arguments and setting that load the probe into a server. */
export function gcProbe(
  root: string,
  dir: string,
): { args: string[]; env: { BENCH_GC_DIR: string } } {
  return {
    args: ['--expose-gc', '-r', path.join(root, 'dist', 'bench', 'gc-probe.js')],
    env: { BENCH_GC_DIR: dir },
  };
}

/**
 * Milliseconds the processes spent collecting garbage between `startMs` and `endMs` (epoch),
 * a collection counted when it began inside; undefined when a process left no file (it was
 * killed rather than stopped, so its count would be missing).
 */
export function gcMsInWindow(
  dir: string,
  pids: readonly number[],
  startMs: number,
  endMs: number,
): number | undefined {
  let total = 0;
  for (const pid of pids) {
    const file = path.join(dir, `${pid}.json`);
    if (!existsSync(file)) return undefined;
    const events = JSON.parse(readFileSync(file, 'utf8')) as GcEvents;
    for (let i = 0; i + 1 < events.length; i += 2) {
      const start = events[i] ?? 0;
      if (start >= startMs && start < endMs) total += events[i + 1] ?? 0;
    }
  }
  return total;
}
