// The RLQS rows of the bench: usage reports a second on quota streams (bench/rlqs-load.ts), and
// the main ShouldRateLimit row again while quota streams report beside it at Envoy's cadence,
// its configuration, the streams run beside another load, and what a run of either says.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { LoadResult } from './load';
import { captureOutput, pinned, stop, waitFor } from './processes';
import type { RlqsLoadOptions, RlqsLoadResult, RlqsShape, RlqsSummary } from './rlqs-load';
import { RLQS_DOMAIN } from './rlqs-load';
import { CONFIG, NAMES, one, scenario, type Scenario } from './scenarios';

/** The configuration directory of the RLQS rows: the bench's descriptors and one quota rule. */
export const RLQS_DIRECTORY = 'config-rlqs';

/** Every bucket of the streams matches this rule; each has the whole budget to itself. */
const RLQS_CONFIG = `domain: ${RLQS_DOMAIN}
quota_buckets:
  - bucket: { name: bench, id: '*' }
    requests_per_unit: 1000000000
    unit: second
`;

export const RLQS_NAMES = {
  reports: 'RLQS reports/s (bucket usages), 100 streams x 10 buckets, memory',
  beside: 'ShouldRateLimit with RLQS streams active (redis, 1 descriptor)',
  besideFirst: 'ShouldRateLimit with RLQS streams active, opened first (redis, 1 descriptor)',
} as const;

const STREAMS = { connections: 10, streamsPerConnection: 10, bucketsPerStream: 10 } as const;
/**
 * How often each stream beside the calls reports (BENCH_RLQS_INTERVAL_MS): Envoy reports every
 * reporting_interval, often 1 s; by default ten times as often.
 */
export const BESIDE_INTERVAL_MS = Number(process.env.BENCH_RLQS_INTERVAL_MS ?? '100');
const BESIDE: RlqsShape = { ...STREAMS, intervalMs: BESIDE_INTERVAL_MS };
const ENV = { RUNTIME_APPDIRECTORY: RLQS_DIRECTORY };
const STOP_GRACE_MS = 5000;

export const RLQS_ROWS: readonly Scenario[] = [
  scenario({
    name: RLQS_NAMES.reports,
    backend: 'memory',
    bodies: () => [],
    // One report message in flight per stream.
    concurrency: STREAMS.connections * STREAMS.streamsPerConnection,
    expect: 'usage reports',
    ceiling: undefined,
    limit: undefined,
    env: ENV,
    rlqsLoad: STREAMS,
  }),
  // The streams open while ShouldRateLimit calls flow, as Envoys reconnect to a busy replica.
  scenario({
    name: RLQS_NAMES.beside,
    bodies: one,
    baseline: NAMES.redisOne,
    env: ENV,
    rlqsStreams: { shape: BESIDE, opened: 'under load' },
  }),
  // Opened all at once into the idle service: their long-lived objects are the first V8 sees
  // from allocation sites the calls share, and it may allocate the calls' in the old generation
  // from then on (docs/performance.md).
  scenario({
    name: RLQS_NAMES.besideFirst,
    bodies: one,
    baseline: NAMES.redisOne,
    env: ENV,
    rlqsStreams: { shape: BESIDE, opened: 'first' },
  }),
];

/** Whether the scenario needs a service that serves StreamRateLimitQuotas. */
export function needsRlqs(scenario: Scenario): boolean {
  return scenario.rlqsLoad !== undefined || scenario.rlqsStreams !== undefined;
}

/** Whether the built checkout at `root` has the quota service (an older one has not). */
export function hasRlqs(root: string): boolean {
  return existsSync(path.join(root, 'dist', 'src', 'quota', 'index.js'));
}

export function writeRlqsConfig(work: string): void {
  const dir = path.join(work, RLQS_DIRECTORY);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'bench.yaml'), CONFIG);
  writeFileSync(path.join(dir, 'rlqs.yaml'), RLQS_CONFIG);
}

export function rlqsLoadOptions(
  shape: RlqsShape,
  port: number,
  warmupMs: number,
  durationMs: number,
): RlqsLoadOptions {
  return { host: '127.0.0.1', port, shape, warmupMs, durationMs };
}

const ms = (n: number): string => n.toFixed(2);

function describeSummary(s: RlqsSummary): string {
  const perSecond = (n: number): string => (n / Math.max(1e-9, s.seconds)).toFixed(0);
  const endings = Object.entries(s.endings)
    .map(([why, n]) => `${n} ${why}`)
    .join(', ');
  return (
    `${s.streams} streams, ${perSecond(s.messages)} report messages/s (${perSecond(s.usages)} bucket usages/s), ` +
    `${s.assignments} assignments after the first, ${s.abandons} abandons, ` +
    `${s.streamsEnded === 0 ? 'no stream ended' : `${s.streamsEnded} streams ended (${endings})`}; ` +
    `watch -> first assignment p50 ${ms(s.watchMs.p50)} ms, p99 ${ms(s.watchMs.p99)} ms; ` +
    `client CPU ${(s.cpuSeconds / Math.max(1e-9, s.seconds)).toFixed(2)}`
  );
}

/** The line printed after a run of the reports row: what its streams did. */
export function rlqsLoadNote(scenario: Scenario, result: LoadResult): string {
  if (scenario.rlqsLoad === undefined) return '';
  const { rlqs } = result as RlqsLoadResult;
  return `  ${scenario.name}: ${describeSummary(rlqs)}; latency is a round of reports to the PING behind it\n`;
}

/** Quota streams reporting beside the row's load, until stopped. */
export interface RlqsStreamsBeside {
  /** Stops the streams; their summary (the same one however often it is called). */
  stop(): Promise<RlqsSummary>;
  /** The line printed after the run. */
  note(summary: RlqsSummary): string;
}

/** Starts the streams beside a load on `cores` and waits until every stream is watching. */
export async function startRlqsStreams(
  root: string,
  cores: string,
  work: string,
  port: number,
  shape: RlqsShape,
): Promise<RlqsStreamsBeside> {
  const file = path.join(work, `rlqs-streams-${String(port)}.json`);
  const options: RlqsLoadOptions = { host: '127.0.0.1', port, shape, warmupMs: 0 };
  writeFileSync(file, JSON.stringify(options));
  const child = pinned(cores, process.execPath, [
    path.join(root, 'dist', 'bench', 'rlqs-load.js'),
    file,
  ]);
  const output = captureOutput(child);
  // 'close', unlike 'exit', comes once the summary has been read from the pipe.
  const closed = new Promise<void>((resolve) => {
    child.once('close', () => {
      resolve();
    });
  });
  let stopped: Promise<RlqsSummary> | undefined;
  const stopOnce = async (): Promise<RlqsSummary> => {
    child.kill('SIGTERM');
    await Promise.race([closed, delay(STOP_GRACE_MS)]);
    await stop(child);
    const last = output().trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(last) as RlqsSummary;
    } catch {
      throw new Error(`the RLQS streams beside the load printed no summary:\n${output()}`);
    }
  };
  try {
    await waitFor(
      () => output().includes('watching\n') || child.exitCode !== null,
      () => `the RLQS streams to watch their buckets:\n${output()}`,
    );
  } catch (err: unknown) {
    await stop(child);
    throw err;
  }
  if (child.exitCode !== null) throw new Error(`the RLQS streams failed:\n${output()}`);
  return {
    stop: () => (stopped ??= stopOnce()),
    note: (summary) =>
      `  RLQS streams beside, one report every ${String(shape.intervalMs)} ms each: ${describeSummary(summary)}\n`,
  };
}
