// A Node.js that package.json's engines does not name gets a message naming engines when a
// command starts: an older one is refused (exit 1, nothing listens), a newer one is warned
// about and runs. The refusal is seen on a real older Node where the machine has one (Debian's
// /usr/bin/node), and on a reported version otherwise; the warning on a reported version, as
// no newer Node is installed. See docs/decisions/unsupported-node.md.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeVerdict, packageEngines } from '../../src/lib/node-support';
import { collectCleanups } from '../helpers/cleanups';
import { LOOPBACK_LISTENERS } from '../helpers/ports';
import { BIN } from '../helpers/service-process';

const cleanup = collectCleanups();
const ROOT = path.resolve(__dirname, '..', '..');
const ENGINES = packageEngines() ?? '';

/** A node on the machine older than engines allows (Debian's, or the default PATH's), if any. */
function olderNode(): { path: string; version: string } | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const run = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
    const version = run.stdout.trim();
    if (run.status === 0 && nodeVerdict(version, ENGINES).kind === 'refuse')
      return { path: candidate, version };
  }
  return undefined;
}

/** A preload that makes this Node report `version`, for a release the machine lacks. */
function reporting(version: string): string[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'node-version-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const file = path.join(dir, 'version.cjs');
  writeFileSync(file, `Object.defineProperty(process, 'version', { value: '${version}' });\n`);
  return ['--require', file];
}

function runCommand(
  node: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, args, {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...LOOPBACK_LISTENERS,
        BACKEND_TYPE: 'memory',
        USE_STATSD: 'false',
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        RUNTIME_ROOT: path.join(ROOT, 'examples'),
        RUNTIME_SUBDIRECTORY: 'ratelimit',
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // A service that started despite the warning is stopped once it says it listens.
    child.stderr.on('data', () => {
      if (/msg="?listening/.test(stderr) || stderr.includes('"@message":"listening"'))
        child.kill('SIGTERM');
    });
    cleanup(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('exit', (code, signal) => {
      resolve({ code, signal, stderr, stdout });
    });
  });
}

const older = olderNode();

it(
  older === undefined
    ? 'refuses to start on an older Node (v20.20.2 reported: the machine has no older node)'
    : `refuses to start on the machine's older Node, ${older.version} (${older.path})`,
  async () => {
    const run =
      older === undefined
        ? await runCommand(process.execPath, [...reporting('v20.20.2'), BIN.ratelimit])
        : await runCommand(older.path, [BIN.ratelimit]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/package\.json "engines" names \(node \^/);
    expect(run.stderr).toMatch(/refusing to start/);
    expect(run.stderr).not.toMatch(/listening/);
  },
);

it('refuses in the JSON log format with LOG_FORMAT=json', async () => {
  const run = await runCommand(process.execPath, [...reporting('v22.1.0'), BIN.ratelimit], {
    LOG_FORMAT: 'json',
  });
  expect(run.code).toBe(1);
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0] ?? '')).toMatchObject({
    level: 'fatal',
    '@message': expect.stringContaining('"engines"') as string,
  });
});

it('warns on a newer Node that engines does not name, and starts', async () => {
  const run = await runCommand(process.execPath, [...reporting('v27.0.0'), BIN.ratelimit]);
  expect(run.stderr).toMatch(/v27\.0\.0 is not one that package\.json "engines" names/);
  expect(run.stderr).toMatch(/listening/);
  // Stopped by the test once listening: by its SIGTERM handler, or before it was installed.
  expect(run.code === 0 || run.signal === 'SIGTERM').toBe(true);
});

it('refuses the tools too, naming the tool', async () => {
  const run = await runCommand(process.execPath, [
    ...reporting('v20.20.2'),
    BIN.configCheck,
    '-config_dir',
    path.join(ROOT, 'examples', 'ratelimit', 'config'),
  ]);
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(/^ratelimit-config-check: Node\.js v20\.20\.2 is not one/);
});
