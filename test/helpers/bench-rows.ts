// Bench measurements and table rows made up for the bench's report tests.
import type { Measurement, Row } from '../../bench/report';
import { scenario } from '../../bench/scenarios';

/** A measured window: `answersPerSecond` at `serverCpu` cores, with the given p99. */
export function measurement(answersPerSecond: number, serverCpu = 1, p99 = 1): Measurement {
  return {
    answersPerSecond,
    latencyMs: { p50: p99 / 2, p90: p99, p99, max: p99 },
    serverCpu,
    supervisorCpu: undefined,
    loadCpu: 0.2,
    backendCpu: undefined,
    peakRssMiB: 100,
    unexpected: 0,
    outcomes: { OK: answersPerSecond },
    redisCommandsPerAnswer: undefined,
    gcShare: undefined,
  };
}

/** A table row named `name` (10,000 answers/s on one core unless `fields` says otherwise). */
export function row(name: string, fields: Partial<Row> & { median?: Measurement } = {}): Row {
  const median = fields.median ?? measurement(10_000);
  return {
    scenario: scenario({ name, bodies: () => [] }),
    median,
    rounds: [median],
    ratio: undefined,
    limitRatio: undefined,
    limitCostRatio: undefined,
    baselineRatio: undefined,
    ...fields,
  };
}
