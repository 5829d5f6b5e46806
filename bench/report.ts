// The bench's results: one measurement per run, the medians table, the targets, and the
// same-run ratios of the Redis modes to single Redis.
import type { LoadResult } from './load';
import { NAMES, type Scenario } from './scenarios';

export interface Measurement {
  readonly answersPerSecond: number;
  readonly latencyMs: LoadResult['latencyMs'];
  readonly serverCpu: number;
  readonly loadCpu: number;
  /** CPU of the scenario's backend processes (the Redis data nodes, or memcached). */
  readonly backendCpu: number | undefined;
  readonly peakRssMiB: number;
  readonly unexpected: number;
  readonly outcomes: Record<string, number>;
  /** Redis commands per answer during the measured window. */
  readonly redisCommandsPerAnswer: number | undefined;
}

export interface Row {
  readonly scenario: Scenario;
  readonly median: Measurement;
  /** Median over rounds of (this scenario / its ceiling in the same round). */
  readonly ratio: number | undefined;
  /** Median over rounds of (this scenario / its single-Redis baseline in the same round). */
  readonly baselineRatio: number | undefined;
  readonly rounds: readonly Measurement[];
}

export function median<T>(values: readonly T[], key: (v: T) => number): T {
  const sorted = [...values].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('no values');
  return middle;
}

const f = (n: number | undefined, digits = 2): string =>
  n === undefined ? '-' : n.toFixed(digits);

export function table(rows: readonly Row[]): string {
  const head = [
    'scenario',
    'in flight',
    'answers/s',
    'x ceiling',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'server CPU',
    'backend CPU',
    'load CPU',
    'redis cmds/answer',
    'RSS MiB',
    'wrong answers',
  ];
  const lines = rows.map(({ scenario, median: m, ratio }) => [
    scenario.name,
    String(scenario.concurrency),
    m.answersPerSecond.toFixed(0),
    ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
    f(m.latencyMs.p50),
    f(m.latencyMs.p90),
    f(m.latencyMs.p99),
    f(m.latencyMs.max, 1),
    f(m.serverCpu),
    f(m.backendCpu),
    f(m.loadCpu),
    f(m.redisCommandsPerAnswer),
    m.peakRssMiB.toFixed(0),
    String(m.unexpected),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const fmt = (cells: string[]): string =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}

export interface Target {
  readonly target: string;
  readonly measured: string;
  readonly isMet: boolean | undefined;
}

export function targets(rows: readonly Row[]): Target[] {
  const row = (name: string): Row | undefined => rows.find((r) => r.scenario.name === name);
  const out: Target[] = [];
  const ratio = (name: string, min: number, label: string): void => {
    const r = row(name);
    if (r?.ratio === undefined) return;
    out.push({
      target: `${label}: >= ${min.toFixed(1)}x the ceiling`,
      measured: `${r.ratio.toFixed(2)}x`,
      isMet: r.ratio >= min,
    });
  };
  const p99 = (name: string, max: number, label: string): void => {
    const r = row(name);
    if (r === undefined) return;
    const value = r.median.latencyMs.p99;
    out.push({
      target: `${label}: p99 < ${max} ms at 16 in flight`,
      measured: `${value.toFixed(2)} ms`,
      isMet: value < max,
    });
  };
  ratio(NAMES.redisOne, 1.0, '1. gRPC, Redis, 1 descriptor, 64 in flight');
  ratio(NAMES.memoryOne, 1.2, '2. memory backend, 64 in flight');
  p99(NAMES.memoryOne16, 2, '3. memory');
  p99(NAMES.redisOne16, 3, '3. Redis');
  const cached = row(NAMES.overLimitCached);
  if (cached?.ratio !== undefined) {
    const commands = cached.median.redisCommandsPerAnswer ?? 0;
    out.push({
      target: '4. over limit with the local cache: no Redis round trip, >= 1.2x',
      measured: `${cached.ratio.toFixed(2)}x, ${commands.toFixed(4)} Redis commands per answer`,
      isMet: cached.ratio >= 1.2 && commands < 0.001,
    });
  }
  const w1 = row(NAMES.workers1);
  const w2 = row(NAMES.workers2);
  if (w1 !== undefined && w2 !== undefined) {
    out.push({
      target: '5. WORKERS 1 -> 2 on two cores (reported)',
      measured: `${(w2.median.answersPerSecond / w1.median.answersPerSecond).toFixed(2)}x (${w1.median.answersPerSecond.toFixed(0)} -> ${w2.median.answersPerSecond.toFixed(0)} answers/s)`,
      isMet: undefined,
    });
  }
  return out;
}

/** The Redis modes beside single Redis: answers/s and p99 as same-round ratios. */
export function modeRatios(rows: readonly Row[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    const baseline = rows.find((r) => r.scenario.name === row.scenario.baseline);
    if (row.baselineRatio === undefined || baseline === undefined) continue;
    const p99 = row.median.latencyMs.p99 / baseline.median.latencyMs.p99;
    lines.push(
      `${row.scenario.name}: ${row.baselineRatio.toFixed(2)}x the answers/s of "${baseline.scenario.name}" in the same rounds, p99 ${p99.toFixed(2)}x`,
    );
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n\n`;
}
