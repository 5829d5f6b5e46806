// The cost curves and WORKERS rows of docs/performance.md: the bench has a row for each step of each curve, and
// prints each curve row's CPU per answer against its reference row, and each worker count's.
import { CURVES, workerScenarios } from '../../../bench/curves';
import { curves, workers } from '../../../bench/report';
import { SCENARIOS, scenario } from '../../../bench/scenarios';
import { measurement, row } from '../../helpers/bench-rows';

describe('cost curves', () => {
  const names = new Set([...SCENARIOS, ...CURVES].map((s) => s.name));

  it('has a row for every step of every curve, on the backends each is measured on', () => {
    const steps = [
      // descriptors per request 1 / 3 / 10
      'redis, 1 descriptor',
      'redis, 3 descriptors',
      'redis, 10 descriptors',
      'memory, 1 descriptor',
      'memory, 3 descriptors',
      'memory, 10 descriptors',
      // distinct keys 10k / 1M, memory and Redis
      'redis, 10,000 distinct keys',
      'redis, 1,000,000 distinct keys',
      'memory, 10,000 distinct keys',
      'memory, 1,000,000 distinct keys',
      // over-limit share with the local cache
      'redis, local cache, 0% over limit',
      'redis, local cache, 50% over limit',
      'redis, local cache, 100% over limit',
      // request size small / 4 KiB
      'redis, 1 descriptor, 4 KiB request',
    ];
    expect(steps.filter((name) => !names.has(name))).toEqual([]);
  });

  it('compares every curve row with a row the bench runs', () => {
    const unmatched = CURVES.filter((s) => s.reference === undefined || !names.has(s.reference));
    expect(unmatched.map((s) => s.name)).toEqual([]);
  });

  it("prints each curve row's CPU per answer against its reference's, with its RSS", () => {
    const one = scenario({ name: 'memory, 1 descriptor', bodies: () => [] });
    const ten = scenario({
      name: 'memory, 10 descriptors',
      bodies: () => [],
      reference: one.name,
    });
    // 1 core at 10,000 answers/s is 100 µs; 0.9 core at 6,000 is 150 µs.
    const text = curves([
      row(one.name, { scenario: one, median: measurement(10_000, 1) }),
      row(ten.name, { scenario: ten, median: { ...measurement(6_000, 0.9), peakRssMiB: 321 } }),
    ]);
    expect(text).toBe(
      'cost curves (server CPU per answer):\n' +
        'memory, 10 descriptors: 150.0 µs per answer, 1.50x "memory, 1 descriptor" (100.0 µs), RSS 321 MiB\n\n',
    );
    expect(curves([row(one.name, { scenario: one })])).toBe('');
  });
});

describe('WORKERS rows', () => {
  it('runs one row per count given, ignoring what is not a count', () => {
    expect(workerScenarios('1, 2,x,0,4').map((s) => s.workers)).toEqual([1, 2, 4]);
  });

  it("prints each worker count's answers, cores, CPU per answer and the supervisor's share", () => {
    const [two] = workerScenarios('2');
    if (two === undefined) throw new Error('no WORKERS=2 row');
    const m = { ...measurement(20_000, 1.6), supervisorCpu: 0.016 };
    expect(workers([row(two.name, { scenario: two, median: m })])).toBe(
      'WORKERS=2: 20000 answers/s, 1.60 cores, 80.0 µs CPU per answer, supervisor 1.0% of it\n\n',
    );
  });
});
