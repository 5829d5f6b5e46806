// Every bin of package.json answers -h and --help with its usage and exit 0, starting nothing.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { allSettingNames } from '../../src/settings';

const ROOT = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
};

/**
 * Runs a bin with a short timeout: one that started a server instead would be killed by it.
 * PORT is wrong on purpose: reading the settings would stop `ratelimit` with code 1.
 */
function run(bin: string, args: string[]) {
  const result = spawnSync(process.execPath, [path.join(ROOT, bin), ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: 'not-a-port' },
    encoding: 'utf8',
    timeout: 15_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const BINS = Object.entries(pkg.bin);
const CASES = BINS.flatMap(([name, bin]) =>
  ['-h', '--help'].map((flag) => [name, flag, bin] as const),
);

it('covers every bin', () => {
  expect(BINS.map(([name]) => name).sort()).toEqual([
    'ratelimit',
    'ratelimit-client',
    'ratelimit-config-check',
    'ratelimit-control-plane-sim',
    'ratelimit-healthcheck',
  ]);
});

it.each(CASES)('%s %s prints its usage and exits 0', (name, flag, bin) => {
  const result = run(bin, [flag]);
  expect(result).toEqual({
    status: 0,
    stdout: expect.stringMatching(new RegExp(`^usage: ${name}\\b`)) as string,
    stderr: '',
  });
});

it('ratelimit --help lists every setting with its default, by section', () => {
  const { stdout } = run(pkg.bin.ratelimit!, ['--help']);
  for (const name of allSettingNames().filter((n) => !n.startsWith('REDIS_PERSECOND_')))
    expect(stdout).toMatch(new RegExp(`^  ${name}=`, 'm'));
  expect(stdout).toMatch(/^ {2}REDIS_TIMEOUT=10s$/m);
  expect(stdout).toMatch(/^ {2}REDIS_PERSECOND_<NAME>: /m);
  expect(stdout).toMatch(/docs\/settings\.md/);
});

it('ratelimit refuses an argument it does not take, instead of starting', () => {
  expect(run(pkg.bin.ratelimit!, ['-config_dir', 'x'])).toEqual({
    status: 2,
    stdout: '',
    stderr:
      'ratelimit: unexpected argument "-config_dir": settings come from the environment (see ratelimit --help)\n',
  });
});
