// The bench's results: one measurement per run, the medians table, and the same-run ratios of
// the Redis modes to single Redis.
import type { LoadResult } from './load';
import type { Scenario } from './scenarios';

export interface Measurement {
  readonly answersPerSecond: number;
  readonly latencyMs: LoadResult['latencyMs'];
  /** Cores the service used: its process, or the supervisor and all its workers. */
  readonly serverCpu: number;
  /** The supervisor's share of serverCpu when WORKERS is above 1. */
  readonly supervisorCpu: number | undefined;
  readonly loadCpu: number;
  /** CPU of the scenario's backend processes (the Redis data nodes, or memcached). */
  readonly backendCpu: number | undefined;
  readonly peakRssMiB: number;
  readonly unexpected: number;
  readonly outcomes: Record<string, number>;
  /** Redis commands per answer during the measured window. */
  readonly redisCommandsPerAnswer: number | undefined;
  /**
   * Cores' worth of the window the server(s) spent collecting garbage (bench/gc-probe.ts);
   * undefined when a server was killed before it could write its record.
   */
  readonly gcShare: number | undefined;
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

/** The part of cpuPerAnswer spent collecting garbage, in µs; undefined when not recorded. */
export function gcPerAnswerUs(m: Measurement): number | undefined {
  return m.gcShare === undefined ? undefined : (m.gcShare / Math.max(1, m.answersPerSecond)) * 1e6;
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
    'GC µs/answer',
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
    f(gcPerAnswerUs(m), 1),
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

const us = (m: Measurement): string => `${(cpuPerAnswer(m) * 1e6).toFixed(1)} µs`;

/** Each cost-curve row's CPU per answer beside its reference row's, from the same rounds. */
export function curves(rows: readonly Row[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    const reference = rows.find((r) => r.scenario.name === row.scenario.reference);
    if (reference === undefined) continue;
    const ratio = cpuPerAnswer(row.median) / cpuPerAnswer(reference.median);
    lines.push(
      `${row.scenario.name}: ${us(row.median)} per answer, ${ratio.toFixed(2)}x "${reference.scenario.name}" (${us(reference.median)}), RSS ${row.median.peakRssMiB.toFixed(0)} MiB`,
    );
  }
  return lines.length === 0 ? '' : `cost curves (server CPU per answer):\n${lines.join('\n')}\n\n`;
}

/** Per worker count: answers/s, CPU per answer, and the supervisor's share. */
export function workers(rows: readonly Row[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    if (!row.scenario.name.includes('WORKERS=')) continue;
    const m = row.median;
    const supervisor =
      m.supervisorCpu === undefined
        ? ''
        : `, supervisor ${((m.supervisorCpu / Math.max(1e-9, m.serverCpu)) * 100).toFixed(1)}% of it`;
    lines.push(
      `WORKERS=${row.scenario.workers}: ${m.answersPerSecond.toFixed(0)} answers/s, ${m.serverCpu.toFixed(2)} cores, ${us(m)} CPU per answer${supervisor}`,
    );
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n\n`;
}
