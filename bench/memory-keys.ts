// The memory backend at a million keys, in-process: increments per second against 10,000 keys,
// the longest event-loop pause while the background sweep passes over a million keys, and
// what one synchronous pass (the sweep before it was sliced) takes. Prints one JSON line.
// Run with --expose-gc: the keys' own young-generation collections are finished before the
// sweep is timed, so the pauses measured are the sweep's.
import { ManualClock } from '../src/lib/clock';
import { MemoryCounterStore } from '../src/store/memory/memory-store';
import type { CounterIncrement } from '../src/store';

export interface MemoryKeysResult {
  readonly keys: number;
  readonly incrementsPerSecondSmall: number;
  readonly incrementsPerSecondLarge: number;
  readonly rssMiBLarge: number;
  /** Most CPU time between two event-loop turns while a background sweep ran over the map. */
  readonly longestSweepPauseMs: number;
  /** The same gap in wall-clock time: includes the time other processes had the core. */
  readonly longestSweepGapWallMs: number;
  /** The longest pause of the process's first sweep, while the JIT still compiles it. */
  readonly firstSweepPauseMs: number;
  /** One synchronous pass over the large map, half of it expired. */
  readonly fullPassMs: number;
}

const SMALL = 10_000;
const LARGE = 1_000_000;
const CALLS = 2_000_000;
const WAVES = 3;

function item(key: string): CounterIncrement {
  return { key, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false };
}

/** Increments per second with keys drawn in a stride over `keys` distinct ones. */
function rate(store: MemoryCounterStore, keys: readonly string[]): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) {
    // A stride that visits every key in an order unlike insertion, as traffic would.
    store.increment([item(keys[(i * 7919) % keys.length] ?? '')]);
  }
  return CALLS / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** The longest gaps (CPU, wall) between setImmediate turns until the sweep has emptied. */
async function sweepPause(store: MemoryCounterStore, until: number): Promise<[number, number]> {
  let longestCpu = 0;
  let longestWall = 0;
  const deadline = performance.now() + 60_000;
  // Timed from the first slice on: the turns before it are the process's own.
  const start = store.size;
  while (store.size === start && performance.now() < deadline)
    await new Promise((resolve) => setImmediate(resolve));
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  while (store.size > until && performance.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    lastCpu = process.cpuUsage();
    longestCpu = Math.max(longestCpu, (cpu.user + cpu.system) / 1000);
    longestWall = Math.max(longestWall, now - last);
    last = now;
  }
  return [longestCpu, longestWall];
}

/** Finishes pending collections, so that what is timed next is not the fill's garbage. */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
}

async function main(): Promise<MemoryKeysResult> {
  const clock = new ManualClock(1_000_000_000);
  const keys = (n: number, prefix: string): string[] =>
    Array.from({ length: n }, (_, i) => `bench_user_${prefix}${i}_1700000000`);
  const small = new MemoryCounterStore({ clock, sweepIntervalMs: 3_600_000 });
  const smallKeys = keys(SMALL, 's');
  rate(small, smallKeys);
  const incrementsPerSecondSmall = rate(small, smallKeys);
  await small.close();

  const large = new MemoryCounterStore({ clock, sweepIntervalMs: 20 });
  const largeKeys = keys(LARGE, 'l');
  rate(large, largeKeys);
  const incrementsPerSecondLarge = rate(large, largeKeys);
  const rssMiBLarge = process.memoryUsage().rss / 1024 / 1024;
  // Half the keys expire: a later window's keys written, then the clock passes the first's.
  for (let i = 0; i < LARGE / 2; i++) large.increment([{ ...item(`later${i}`), ttlSeconds: 3600 }]);
  clock.advance(120_000);
  collect();
  const [firstSweepPauseMs] = await sweepPause(large, LARGE / 2);
  // A service's sweeper runs every second and is compiled long before a million keys expire;
  // the first passes also wait for the JIT, whose compilations share the pinned core (and
  // recompile once a branch runs for the first time). The last of WAVES waves of half a
  // million keys more, expired the same way, is the steady state.
  let last: [number, number] = [0, 0];
  for (let wave = 1; wave <= WAVES; wave++) {
    for (let i = 0; i < LARGE / 2; i++) large.increment([item(`wave${wave}_${i}`)]);
    clock.advance(120_000);
    // A forced full collection here would throw the sweep's compiled code away each time.
    if (wave === 1) collect();
    last = await sweepPause(large, LARGE / 2);
  }
  const [longestSweepPauseMs, longestSweepGapWallMs] = last;
  await large.close();

  const once = new MemoryCounterStore({ clock, sweepIntervalMs: 3_600_000 });
  for (let i = 0; i < LARGE; i++)
    once.increment([{ ...item(`o${i}`), ttlSeconds: i % 2 ? 60 : 3600 }]);
  clock.advance(120_000);
  collect();
  const started = performance.now();
  once.sweep();
  const fullPassMs = performance.now() - started;
  await once.close();
  return {
    keys: LARGE,
    incrementsPerSecondSmall,
    incrementsPerSecondLarge,
    rssMiBLarge,
    longestSweepPauseMs,
    longestSweepGapWallMs,
    firstSweepPauseMs,
    fullPassMs,
  };
}

if (require.main === module) {
  main().then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`memory-keys: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
