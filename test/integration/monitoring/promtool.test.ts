// deploy/monitoring/ratelimit-alerts.yaml through Debian's promtool: `check rules` on the file
// (and the Helm chart's copy, which must be the same text), and `test rules` on
// ratelimit-alerts.test.yaml, where each alert fires and resolves.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runProgram } from '../../helpers/programs';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const RULES = path.join(ROOT, 'deploy', 'monitoring', 'ratelimit-alerts.yaml');
const CHART_COPY = path.join(
  ROOT,
  'deploy',
  'helm',
  'ratelimit',
  'monitoring',
  'ratelimit-alerts.yaml',
);
const UNIT_TESTS = path.join(ROOT, 'deploy', 'monitoring', 'ratelimit-alerts.test.yaml');

/** The alert names of a rules file, in order. */
function alertNames(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1] ?? '');
}

describe('the alert rules under promtool', () => {
  test('promtool check rules accepts the rules file', () => {
    const run = runProgram('promtool', ['check', 'rules', RULES], { timeout: 30_000 });
    expect([run.status, run.stdout + run.stderr]).toEqual([
      0,
      expect.stringContaining('SUCCESS: 7 rules found'),
    ]);
  });

  test("the Helm chart's copy is the rules file", () => {
    expect(readFileSync(CHART_COPY, 'utf8')).toBe(readFileSync(RULES, 'utf8'));
  });

  test('promtool test rules: each alert fires and resolves', () => {
    const run = runProgram('promtool', ['test', 'rules', UNIT_TESTS], { timeout: 60_000 });
    expect([run.status, run.stdout + run.stderr]).toEqual([0, expect.stringContaining('SUCCESS')]);
    // Every alert has a test that expects it to fire and one that expects nothing after.
    const tests = readFileSync(UNIT_TESTS, 'utf8');
    for (const alert of alertNames(RULES)) {
      const evaluations = [
        ...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:( \\[\\])?`, 'g')),
      ];
      expect([alert, evaluations.some((m) => m[1] === undefined)]).toEqual([alert, true]);
      expect([alert, evaluations.some((m) => m[1] !== undefined)]).toEqual([alert, true]);
    }
  });
});
