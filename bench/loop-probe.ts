// Loaded into the service by the configuration-at-scale rows (`node -r`): every second it appends
// to BENCH_LOOP_FILE the longest stretch of the main thread's own CPU time between two turns of
// its event loop, from Linux's per-thread schedstat. Answers wait on such a stretch whatever
// else the machine runs; a longer wall-clock gap with little own CPU is the machine's doing.
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/** One line of the file: the second's end (ms since the epoch) and its longest stretches (ms). */
export interface LoopSecond {
  readonly at: number;
  /** The main thread's own CPU between two turns, at most. */
  readonly busyMs: number;
  /** Wall-clock time between two turns, at most. */
  readonly gapMs: number;
}

const TICK_MS = 2;
const file = process.env.BENCH_LOOP_FILE;
const schedstat = `/proc/self/task/${process.pid}/schedstat`;

/** The main thread's CPU time so far in ms; undefined where schedstat is missing. */
function ownCpuMs(): number | undefined {
  try {
    return Number(readFileSync(schedstat, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

if (isMainThread && file !== undefined && file !== '' && ownCpuMs() !== undefined) {
  let lastAt = performance.now();
  let lastCpu = ownCpuMs() ?? 0;
  let busyMs = 0;
  let gapMs = 0;
  setInterval(() => {
    const now = performance.now();
    const cpu = ownCpuMs() ?? lastCpu;
    busyMs = Math.max(busyMs, cpu - lastCpu);
    gapMs = Math.max(gapMs, now - lastAt);
    lastAt = now;
    lastCpu = cpu;
  }, TICK_MS).unref();
  setInterval(() => {
    const second: LoopSecond = { at: Date.now(), busyMs, gapMs };
    appendFileSync(file, `${JSON.stringify(second)}\n`);
    busyMs = 0;
    gapMs = 0;
  }, 1000).unref();
}

/** The longest stretches of the seconds that ended from `from` to `to` (ms since the epoch). */
export function loopWorst(path: string, from: number, to: number): LoopSecond {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // no probe output: nothing measured
  }
  let busyMs = 0;
  let gapMs = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const second = JSON.parse(line) as LoopSecond;
    if (second.at < from || second.at > to + 1000) continue;
    busyMs = Math.max(busyMs, second.busyMs);
    gapMs = Math.max(gapMs, second.gapMs);
  }
  return { at: to, busyMs, gapMs };
}
