// The bench's results: one measurement per run, the medians table, and the same-run ratios of
// the Redis modes to single Redis.
import type { LoadResult } from './load';
import type { Scenario } from './scenarios';

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
  /** Median over rounds of (this scenario / the no-op grpc-js ceiling in the same round). */
  readonly ratio: number | undefined;
  /** Median over rounds of (this scenario / the node:http2 constant limit in the same round). */
  readonly limitRatio: number | undefined;
  /**
   * Median over rounds of (the limit's server CPU per answer / this scenario's): the limit
   * ratio by cost rather than throughput, steadier when other work takes the server's core.
   */
  readonly limitCostRatio: number | undefined;
  /** Median over rounds of (this scenario / its single-Redis baseline in the same round). */
  readonly baselineRatio: number | undefined;
  readonly rounds: readonly Measurement[];
}

/** Server CPU seconds per answer: what one call costs the process(es) under test. */
export function cpuPerAnswer(m: Measurement): number {
  return m.serverCpu / Math.max(1, m.answersPerSecond);
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
    'x grpc-js',
    'of limit',
    'CPU µs/answer',
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
  const lines = rows.map(({ scenario, median: m, ratio, limitRatio }) => [
    scenario.name,
    String(scenario.concurrency),
    m.answersPerSecond.toFixed(0),
    ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
    f(limitRatio),
    (cpuPerAnswer(m) * 1e6).toFixed(1),
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
