// `npm run bench` stays runnable: a one-second, one-round run of the memory scenarios against
// the built service prints the table and the targets, and every call got the expected answer.
// Only correctness is asserted here; the figures are for `npm run bench` on a quiet machine.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gcProbe } from '../../bench/gc-window';

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * One-second, one-round bench run with `env`; its whole output and the table's rows as cells
 * ('', scenario, in flight, answers/s, x grpc-js, of limit, ..., wrong answers, '').
 */
async function bench(env: Record<string, string>): Promise<{ output: string; cells: string[][] }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'bench', 'run.js')], {
    env: { ...process.env, BENCH_SECONDS: '1', BENCH_ROUNDS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect({ code, output }).toMatchObject({ code: 0 });
  const cells = output
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| scenario') && !l.startsWith('| --'))
    .map((l) => l.split('|').map((c) => c.trim()));
  return { output, cells };
}

it('runs the bench end to end and every answer is the expected one', async () => {
  const { output, cells } = await bench({ BENCH_ONLY: 'memory, 1 descriptor @16' });
  // Cells: '', scenario, in flight, answers/s, x grpc-js, of limit, ..., wrong answers, ''.
  expect(cells.map((c) => [c[1], c[2]])).toEqual([
    ['ceiling: no-op grpc-js', '64'],
    ['ceiling: no-op grpc-js @16', '16'],
    ['limit: node:http2 constant', '64'],
    ['limit: node:http2 constant @16', '16'],
    ['memory, 1 descriptor @16', '16'],
  ]);
  for (const c of cells) {
    expect(Number(c[3])).toBeGreaterThan(0);
    // GC µs/answer: every server, the ceilings included, left its GC record as it stopped.
    expect(c[7]).toMatch(/^\d+\.\d$/);
    expect(c[c.length - 2]).toBe('0');
  }
  expect(output).toMatch(/ memory, 16 in flight: p99 < 2 ms: \d+\.\d+ ms/);
  expect(output).toMatch(/results: .*bench-results\/bench-.*\.json/);
});

it('runs a row and its [before] twin side by side, with their ratio and no ceilings', async () => {
  // This checkout as its own "before": the mode's plumbing, not a change, is under test.
  const { output, cells } = await bench({
    BENCH_ONLY: '=memory, 1 descriptor @16',
    BENCH_BEFORE: ROOT,
    BENCH_SIDE_BY_SIDE: '1',
  });
  expect(cells.map((c) => [c[1], c[4], c[5], c[c.length - 2]])).toEqual([
    ['memory, 1 descriptor @16', '-', '-', '0'],
    ['memory, 1 descriptor @16 [before]', '-', '-', '0'],
  ]);
  // Their ratio is the only comparison a side-by-side row prints.
  expect(output).toMatch(
    /memory, 1 descriptor @16 \[before\]: \d+\.\d\dx the answers\/s of "memory, 1 descriptor @16" in the same rounds/,
  );
  expect(output).toContain('targets: not judged side by side');
});

it('measures the configuration at scale: first answers, memory, loads again under load, the prefix rows', async () => {
  // Small sizes: the section's plumbing, files and xDS, not its figures, is under test.
  const { output, cells } = await bench({
    BENCH_ONLY: 'config scale|prefix rule',
    BENCH_SCALE_SIZES: '300:0,1500:150',
    BENCH_SCALE_SECONDS: '3',
  });
  expect(cells.filter((c) => c[1]?.includes('prefix rule')).map((c) => [c[1], c.at(-2)])).toEqual([
    ['memory, many rules, the first prefix rule', '0'],
    ['memory, many rules, the last prefix rule', '0'],
  ]);
  const scale = output
    .split('\n')
    .filter((l) => / rules, (file|xDS) \|/.test(l))
    .map((l) => l.split('|').map((c) => c.trim()));
  expect(scale.map((c) => c[1])).toEqual([
    '300 rules, file',
    '1,650 rules, file',
    '1,650 rules, xDS',
  ]);
  for (const c of scale) expect(c[2]).toMatch(/^\d+ ms$/);
  // The largest is loaded again under load, from a file and over xDS, and ACKed.
  for (const c of scale.slice(1)) {
    expect(c[5]).toMatch(/^\d+ ms$/);
    expect(Number(c[9])).toBeGreaterThan(0);
  }
  expect(scale[2]?.[10]).toMatch(/^\d+ ms$/);
  expect(output).toMatch(
    /config scale: the last of 10,000 prefix rules at >= 0\.8x the first one: \d+\.\d\dx/,
  );
  expect(output).toMatch(/config scale: 1,650 rules \(xDS\): ACK within 5 s of the push: \d+ ms/);
});

// What the bench's warm-up relies on: each server is measured after a full collection.
it("has every server's GC probe run a full collection on SIGUSR2, and the server live on", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gc-probe-'));
  const probe = gcProbe(ROOT, dir);
  // Counts major collections, and reports the count before and after the probe's.
  const script = `
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    let majors = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
    }).observe({ entryTypes: ['gc'] });
    let before;
    process.on('SIGUSR2', () => { before = majors; setTimeout(() => { console.log('majors', before, majors); process.exit(0); }, 200); });
    setTimeout(() => console.log('ready'), 50);
    setTimeout(() => process.exit(3), 10000);`;
  const child = spawn(process.execPath, [...probe.args, '-e', script], {
    env: { ...process.env, ...probe.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
    if (output === 'ready\n') child.kill('SIGUSR2');
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
  expect(code).toBe(0);
  const [, before, after] = /majors (\d+) (\d+)/.exec(output) ?? [];
  expect(Number(after)).toBeGreaterThan(Number(before));
});
