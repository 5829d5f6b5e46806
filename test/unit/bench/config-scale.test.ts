// The configuration-at-scale rows of the bench: the generated files, the table, the verdicts.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scaleConfigYaml, scaleSizes } from '../../../bench/config-scale';
import { scaleTable } from '../../../bench/config-scale-report';
import type { ScaleLoad, ScaleReload } from '../../../bench/config-scale-run';
import { loopWorst } from '../../../bench/loop-probe';
import { NAMES } from '../../../bench/scenarios';
import { targets } from '../../../bench/targets';
import { compile, ConfigError } from '../../../src/config';
import { readFastConfig } from '../../../src/config/fast-config';
import { StatsStore } from '../../../src/stats';
import { row } from '../../helpers/bench-rows';

it('generates exact and prefix rules the quick reader takes, each matching as meant', () => {
  const text = scaleConfigYaml({ exact: 50, prefix: 20, variant: 3 });
  const doc = readFastConfig('scale.yaml', text);
  if (doc === undefined || doc instanceof ConfigError) throw new Error('not read quickly');
  expect(doc.descriptors).toHaveLength(70);
  const compiled = compile([doc], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  if (!compiled.ok) throw new Error('refused');
  const find = (key: string, value: string): string | undefined =>
    compiled.snapshot.findLimit('scale', { entries: [{ key, value }], limit: undefined })?.stats
      .key;
  expect(find('tenant', 't49')).toBe('scale.tenant_t49');
  expect(find('path', '/api/v19/items')).toBe('scale.path_/api/v19/*');
  expect(find('path', '/api/v20/items')).toBeUndefined();
  expect(text).not.toBe(scaleConfigYaml({ exact: 50, prefix: 20, variant: 4 }));
});

it('reads the sizes from BENCH_SCALE_SIZES, smallest first, and refuses what is not one', () => {
  expect(scaleSizes()).toEqual([
    { exact: 1000, prefix: 0 },
    { exact: 10_000, prefix: 0 },
    { exact: 100_000, prefix: 10_000 },
  ]);
  expect(scaleSizes('2000:200,500')).toEqual([
    { exact: 500, prefix: 0 },
    { exact: 2000, prefix: 200 },
  ]);
  expect(() => scaleSizes('lots')).toThrow(/BENCH_SCALE_SIZES/);
});

const reload = (fields: Partial<ScaleReload> = {}): ScaleReload => ({
  seconds: 30,
  longestAnswerMs: 40,
  p99Ms: 5,
  answersPerSecond: 20_000,
  reloads: 9,
  ackMs: undefined,
  rssAfterMiB: 300,
  longestBusyMs: 12,
  longestGapMs: 30,
  ...fields,
});

/** A load that was not loaded again under load (the smaller sizes). */
const bare = (fields: Partial<ScaleLoad> = {}): ScaleLoad => ({
  source: 'file',
  rules: 110_000,
  firstAnswerMs: 2000,
  rssAfterLoadMiB: 250,
  ...fields,
});

const load = (fields: Partial<ScaleLoad> = {}): ScaleLoad => bare({ reload: reload(), ...fields });

/** The verdicts of the config scale targets whose text holds `part`. */
function verdicts(loads: ScaleLoad[], part: string): (boolean | undefined)[] {
  return targets([], undefined, loads)
    .filter((t) => t.target.includes(part))
    .map((t) => t.isMet);
}

it('judges the first answer, memory, the longest answer and the ACK at their thresholds', () => {
  expect(verdicts([load({ firstAnswerMs: 3000 })], 'first answer')).toEqual([true]);
  expect(verdicts([load({ firstAnswerMs: 3001 })], 'first answer')).toEqual([false]);
  expect(verdicts([load({ reload: reload({ rssAfterMiB: 399 }) })], 'RSS')).toEqual([true]);
  expect(verdicts([load({ reload: reload({ rssAfterMiB: 400 }) })], 'RSS')).toEqual([false]);
  expect(verdicts([load({ reload: reload({ longestAnswerMs: 100 }) })], 'no answer')).toEqual([
    true,
  ]);
  expect(verdicts([load({ reload: reload({ longestAnswerMs: 101 }) })], 'no answer')).toEqual([
    false,
  ]);
  // A window in which nothing was loaded again shows nothing.
  expect(verdicts([load({ reload: reload({ reloads: 0 }) })], 'no answer')).toEqual([false]);
  const xds = (ackMs: number): ScaleLoad => load({ source: 'xds', reload: reload({ ackMs }) });
  expect(verdicts([xds(5000)], 'ACK')).toEqual([true]);
  expect(verdicts([xds(5001)], 'ACK')).toEqual([false]);
  // Loads without a reload (the smaller sizes) are shown, not judged.
  expect(targets([], undefined, [bare({ rules: 1000 })])).toEqual([]);
});

it('judges the last prefix rule against the first at 0.8x', () => {
  const judged = (ratio: number): (boolean | undefined)[] =>
    targets([row(NAMES.lastPrefix, { baselineRatio: ratio })])
      .filter((t) => t.target.includes('prefix'))
      .map((t) => t.isMet);
  expect(judged(0.8)).toEqual([true]);
  expect(judged(0.79)).toEqual([false]);
});

it('prints a line per load, with a dash where a figure was not measured', () => {
  const lines = scaleTable([
    bare({ rules: 1000 }),
    load({ source: 'xds', reload: reload({ ackMs: 1500 }) }),
  ]).split('\n');
  expect(lines[2]).toBe(
    '| 1,000 rules, file | 2000 ms | 250 MiB | - | - | - | - | - | - | - | - |',
  );
  expect(lines[3]).toBe(
    '| 110,000 rules, xDS | 2000 ms | 250 MiB | 30 s, 20000/s | 40 ms | 5.0 ms | 30.0 ms | 12.0 ms | 9 | 1500 ms | 300 MiB |',
  );
});

it("reads the loop probe's longest stretches within a window", () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'loop-probe-'));
  const file = path.join(dir, 'loop.jsonl');
  const second = (at: number, busyMs: number, gapMs: number): string =>
    `${JSON.stringify({ at, busyMs, gapMs })}\n`;
  writeFileSync(file, second(1000, 300, 900) + second(5000, 12, 40) + second(6000, 8, 90));
  try {
    expect(loopWorst(file, 4500, 6000)).toEqual({ at: 6000, busyMs: 12, gapMs: 90 });
    expect(loopWorst(path.join(dir, 'missing'), 0, 1)).toEqual({ at: 1, busyMs: 0, gapMs: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
