// `npm run reliability [-- --long]`: runs the reliability rig (test/reliability/) against the
// built service, in short mode (as `npm test` does) or long mode (--long: bigger loads and the
// 10-minute soak), then prints the rows of docs/reliability.md's table from what each test
// measured. Extra arguments go to jest (for example a test file to run alone).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';

const args = process.argv.slice(2);
const isLong = args.includes('--long');
const jestArgs = args.filter((a) => a !== '--long');
const dir = mkdtempSync(path.join(tmpdir(), 'rl-reliability-'));
const reportFile = path.join(dir, 'report.jsonl');
const started = Date.now();

const jest = spawnSync(
  'npx',
  ['jest', '--selectProjects', 'reliability', '--runInBand', ...jestArgs],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      RELIABILITY_MODE: isLong ? 'long' : 'short',
      RELIABILITY_REPORT: reportFile,
    },
  },
);

let rows = [];
try {
  rows = readFileSync(reportFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
} catch {
  // No test reported: jest's own output says why.
}
rmSync(dir, { recursive: true, force: true });

const command = `npm run reliability${isLong ? ' -- --long' : ''}`;
const cell = (text) => String(text).replace(/\|/g, '\\|');
const figures = (f) =>
  Object.entries(f)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ');
const minutes = ((Date.now() - started) / 60000).toFixed(1);
process.stdout.write(
  `\nReliability rig, ${isLong ? 'long' : 'short'} mode: ${minutes} min on ${cpus().length} cores, ` +
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n\n` +
    '| Test | What was tried | What held | Measured | Reproduce |\n' +
    '| ---- | -------------- | --------- | -------- | --------- |\n' +
    rows
      .map(
        (r) =>
          `| ${cell(r.test)} | ${cell(r.tried)} | ${cell(r.held)} | ${cell(figures(r.figures))} | \`${command}\` |`,
      )
      .join('\n') +
    '\n',
);
process.exit(jest.status ?? 1);
