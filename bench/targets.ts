// The performance targets of docs/performance.md, each checked against same-run ratios and
// printed as met or not.
import { scaleTargets } from './config-scale-report';
import type { ScaleLoad } from './config-scale-run';
import { cpuPerAnswer, type Row } from './report';
import type { MemoryKeysResult } from './memory-keys';
import { RLQS_NAMES } from './rlqs-rows';
import { NAMES } from './scenarios';

export interface Target {
  readonly target: string;
  readonly measured: string;
  /** undefined: reported only. */
  readonly isMet: boolean | undefined;
}

type Find = (name: string) => Row | undefined;

const costPerAnswer = (row: Row): number => cpuPerAnswer(row.median);

const us = (seconds: number): string => `${(seconds * 1e6).toFixed(1)} µs`;

function atLeast(
  out: Target[],
  row: Row | undefined,
  key: 'ratio' | 'limitRatio',
  min: number,
  label: string,
): void {
  const value = row?.[key];
  if (value === undefined) return;
  const of = key === 'ratio' ? 'x the no-op grpc-js server' : ' of the node:http2 limit';
  const byCost = key === 'limitRatio' ? row?.limitCostRatio : undefined;
  out.push({
    target: `${label}: >= ${min.toFixed(2)}${of}`,
    measured: `${value.toFixed(2)}${byCost === undefined ? '' : ` (by CPU per answer: ${byCost.toFixed(2)})`}`,
    isMet: value >= min,
  });
}

function p99Under(out: Target[], row: Row | undefined, max: number, label: string): void {
  if (row === undefined) return;
  const value = row.median.latencyMs.p99;
  out.push({
    target: `${label}: p99 < ${max} ms`,
    measured: `${value.toFixed(2)} ms`,
    isMet: value < max,
  });
}

/** The service against the no-op grpc-js ceiling. */
function againstGrpcJs(row: Find): Target[] {
  const out: Target[] = [];
  atLeast(out, row(NAMES.redisOne), 'ratio', 1.0, 'Redis, 1 descriptor, 64 in flight');
  atLeast(out, row(NAMES.memoryOne), 'ratio', 1.2, 'memory, 64 in flight');
  p99Under(out, row(NAMES.memoryOne16), 2, 'memory, 16 in flight');
  const cached = row(NAMES.overLimitCached);
  if (cached?.ratio !== undefined) {
    const commands = cached.median.redisCommandsPerAnswer ?? 0;
    out.push({
      target: 'over limit with the local cache: no Redis round trip, >= 1.2x',
      measured: `${cached.ratio.toFixed(2)}x, ${commands.toFixed(4)} Redis commands per answer`,
      isMet: cached.ratio >= 1.2 && commands < 0.001,
    });
  }
  return out;
}

/** The algorithms beyond the reference against the fixed window, same backend. */
function algorithms(row: Find): Target[] {
  const out: Target[] = [];
  for (const name of NAMES.algorithms) {
    const r = row(name);
    if (r?.baselineRatio === undefined) continue;
    out.push({
      target: `${name}: >= 0.8x the fixed window on the same backend`,
      measured: `${r.baselineRatio.toFixed(2)}x`,
      isMet: r.baselineRatio >= 0.8,
    });
  }
  return out;
}

/** The Redis path near the node:http2 limit, and flat cost curves. */
function againstLimit(row: Find, memoryKeys: MemoryKeysResult | undefined): Target[] {
  const out: Target[] = [];
  const redisOne = row(NAMES.redisOne);
  atLeast(out, redisOne, 'limitRatio', 0.75, 'Redis, 1 descriptor, 64 in flight');
  atLeast(out, row(NAMES.redisOne16), 'ratio', 1.3, 'Redis, 1 descriptor, 16 in flight');
  p99Under(out, row(NAMES.redisOne16), 3, 'Redis, 1 descriptor, 16 in flight');
  atLeast(out, row(NAMES.memoryOne), 'limitRatio', 0.9, 'memory, 64 in flight');
  const ten = row(NAMES.redisTen);
  if (redisOne !== undefined && ten !== undefined) {
    const one = costPerAnswer(redisOne);
    const perDescriptor = costPerAnswer(ten) / 10;
    out.push({
      target: "Redis, 10 descriptors: cost per descriptor < 1/3 of the 1-descriptor call's",
      measured: `${us(perDescriptor)} per descriptor against ${us(one)} per 1-descriptor call (${(perDescriptor / one).toFixed(2)})`,
      isMet: perDescriptor < one / 3,
    });
  }
  const small = row(NAMES.memoryTenThousand);
  const large = row(NAMES.memoryMillion);
  if (small !== undefined && large !== undefined) {
    const share = large.median.answersPerSecond / small.median.answersPerSecond;
    // Three places: at two, 0.896 printed as 0.90 beside a verdict of not met.
    const byCost = costPerAnswer(small) / costPerAnswer(large);
    out.push({
      target: 'memory, 1M distinct keys: throughput within 10% of 10,000 keys',
      measured: `${share.toFixed(3)} (${small.median.answersPerSecond.toFixed(0)} -> ${large.median.answersPerSecond.toFixed(0)} answers/s; by CPU per answer: ${byCost.toFixed(3)})`,
      isMet: share >= 0.9,
    });
  }
  if (memoryKeys !== undefined) {
    out.push({
      target: 'memory, 1M keys: no pause over 10 ms from expiry sweeping (CPU between turns, warm)',
      measured: `${memoryKeys.longestSweepPauseMs.toFixed(1)} ms (wall ${memoryKeys.longestSweepGapWallMs.toFixed(1)} ms; first sweep of the process ${memoryKeys.firstSweepPauseMs.toFixed(1)} ms; one unsliced pass ${memoryKeys.fullPassMs.toFixed(0)} ms)`,
      isMet: memoryKeys.longestSweepPauseMs <= 10,
    });
  }
  return out;
}

/** The quota streams: what they cost the ShouldRateLimit path beside them, and reports a second. */
function rlqs(row: Find): Target[] {
  const out: Target[] = [];
  const beside = row(RLQS_NAMES.beside);
  const without = row(NAMES.redisOne);
  if (beside?.baselineRatio !== undefined && without !== undefined) {
    const byCost = costPerAnswer(without) / costPerAnswer(beside);
    out.push({
      target:
        'ShouldRateLimit with 100 RLQS streams reporting: >= 0.90x the answers/s without them',
      measured: `${beside.baselineRatio.toFixed(2)}x (by CPU per answer: ${byCost.toFixed(2)})`,
      isMet: beside.baselineRatio >= 0.9,
    });
  }
  const first = row(RLQS_NAMES.besideFirst);
  if (first?.baselineRatio !== undefined && without !== undefined) {
    out.push({
      target: 'the same, the streams opened into the idle service before the calls',
      measured: `${first.baselineRatio.toFixed(2)}x (by CPU per answer: ${(costPerAnswer(without) / costPerAnswer(first)).toFixed(2)})`,
      isMet: undefined,
    });
  }
  const reports = row(RLQS_NAMES.reports);
  if (reports !== undefined) {
    out.push({
      target: 'RLQS bucket usage reports a second, 100 streams of 10 buckets',
      measured: `${reports.median.answersPerSecond.toFixed(0)}/s, ${us(costPerAnswer(reports))} of CPU each`,
      isMet: undefined,
    });
  }
  return out;
}

export function targets(
  rows: readonly Row[],
  memoryKeys?: MemoryKeysResult,
  scaleLoads: readonly ScaleLoad[] = [],
): Target[] {
  const row: Find = (name) => rows.find((r) => r.scenario.name === name);
  return [
    ...againstLimit(row, memoryKeys),
    ...againstGrpcJs(row),
    ...algorithms(row),
    ...scaleTargets(rows, scaleLoads),
    ...rlqs(row),
  ];
}
