// The bench prints each performance target as met or not from same-round ratios: the verdicts
// must follow the thresholds of docs/performance.md exactly, on either side of each.
import type { MemoryKeysResult } from '../../../bench/memory-keys';
import type { Row } from '../../../bench/report';
import { RLQS_NAMES } from '../../../bench/rlqs-rows';
import { NAMES } from '../../../bench/scenarios';
import { targets } from '../../../bench/targets';
import { measurement, row } from '../../helpers/bench-rows';

const SWEEP: MemoryKeysResult = {
  keys: 1_000_000,
  incrementsPerSecondSmall: 4e6,
  incrementsPerSecondLarge: 8e5,
  rssMiBLarge: 300,
  longestSweepPauseMs: 4.5,
  longestSweepGapWallMs: 4.6,
  firstSweepPauseMs: 9,
  fullPassMs: 400,
};

/** The verdict printed for the target whose text starts with `prefix`. */
function verdict(rows: Row[], prefix: string, memoryKeys?: MemoryKeysResult): boolean | undefined {
  const found = targets(rows, memoryKeys).filter((t) => t.target.startsWith(prefix));
  expect(found).toHaveLength(1);
  return found[0]?.isMet;
}

describe('the performance targets the bench prints', () => {
  it('a share of the node:http2 limit, met from the threshold up', () => {
    expect(
      verdict(
        [row(NAMES.redisOne, { limitRatio: 0.75 })],
        'Redis, 1 descriptor, 64 in flight: >= 0.75',
      ),
    ).toBe(true);
    expect(
      verdict(
        [row(NAMES.redisOne, { limitRatio: 0.749 })],
        'Redis, 1 descriptor, 64 in flight: >= 0.75',
      ),
    ).toBe(false);
    expect(
      verdict([row(NAMES.memoryOne, { limitRatio: 0.9 })], 'memory, 64 in flight: >= 0.90'),
    ).toBe(true);
    expect(
      verdict([row(NAMES.memoryOne, { limitRatio: 0.89 })], 'memory, 64 in flight: >= 0.90'),
    ).toBe(false);
  });

  it('Redis at 16 in flight: 1.3x the grpc-js ceiling and a p99 under 3 ms at 16 in flight, judged apart', () => {
    const fast = row(NAMES.redisOne16, { ratio: 1.3, median: measurement(8000, 1, 2.9) });
    const slow = row(NAMES.redisOne16, { ratio: 1.29, median: measurement(8000, 1, 3) });
    const both = (r: Row): (boolean | undefined)[] =>
      targets([r])
        .filter((t) => t.target.startsWith('Redis, 1 descriptor, 16 in flight'))
        .map((t) => t.isMet);
    expect(both(fast)).toEqual([true, true]);
    expect(both(slow)).toEqual([false, false]);
  });

  it('the cost of a descriptor against a 1-descriptor call, by CPU per answer', () => {
    // 100 µs per 1-descriptor call; 10 descriptors at 330 µs is 33 µs each, at 340 µs 34 µs.
    const one = row(NAMES.redisOne, { median: measurement(10_000, 1) });
    const cheap = row(NAMES.redisTen, { median: measurement(10_000 / 3.3, 1) });
    const dear = row(NAMES.redisTen, { median: measurement(10_000 / 3.4, 1) });
    expect(verdict([one, cheap], 'Redis, 10 descriptors')).toBe(true);
    expect(verdict([one, dear], 'Redis, 10 descriptors')).toBe(false);
  });

  it('a million keys within 10% of 10,000, and the warm sweep pause at most 10 ms', () => {
    const small = row(NAMES.memoryTenThousand, { median: measurement(10_000) });
    expect(
      verdict(
        [small, row(NAMES.memoryMillion, { median: measurement(9000) })],
        'memory, 1M distinct',
      ),
    ).toBe(true);
    expect(
      verdict(
        [small, row(NAMES.memoryMillion, { median: measurement(8999) })],
        'memory, 1M distinct',
      ),
    ).toBe(false);
    // Three places, where two would print 0.90 beside "not met"; a server at 0.9 of its core
    // spends 0.9 / 8960 s per answer, so by CPU the million keys are at 0.996.
    const near = targets([small, row(NAMES.memoryMillion, { median: measurement(8960, 0.9) })]);
    expect(near.find((t) => t.target.startsWith('memory, 1M distinct'))).toEqual({
      target: 'memory, 1M distinct keys: throughput within 10% of 10,000 keys',
      measured: '0.896 (10000 -> 8960 answers/s; by CPU per answer: 0.996)',
      isMet: false,
    });
    expect(verdict([], 'memory, 1M keys', SWEEP)).toBe(true);
    expect(verdict([], 'memory, 1M keys', { ...SWEEP, longestSweepPauseMs: 10.1 })).toBe(false);
  });

  it('ShouldRateLimit beside quota streams: 0.90x the row without them, met from the threshold up', () => {
    const target = 'ShouldRateLimit with 100 RLQS streams reporting: >= 0.90x';
    const without = row(NAMES.redisOne);
    expect(verdict([without, row(RLQS_NAMES.beside, { baselineRatio: 0.9 })], target)).toBe(true);
    expect(verdict([without, row(RLQS_NAMES.beside, { baselineRatio: 0.89 })], target)).toBe(false);
    expect(
      verdict([without, row(RLQS_NAMES.besideFirst, { baselineRatio: 0.5 })], 'the same'),
    ).toBe(undefined);
  });

  it('prints nothing for a target whose rows did not run', () => {
    expect(targets([row(NAMES.memoryOne16)]).map((t) => t.target)).toEqual([
      'memory, 16 in flight: p99 < 2 ms',
    ]);
    expect(targets([])).toEqual([]);
  });
});
