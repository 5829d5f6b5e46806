// The file provider on real directories: what it reads, when it reloads, what it refuses.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConfigError, ConfigSnapshot } from '../../../src/config';
import { MemoryLogger } from '../../../src/lib/logger';
import { FileConfigProvider } from '../../../src/provider';
import type { FileSourceSettings } from '../../../src/settings';
import { STAT, StatsStore } from '../../../src/stats';
import { eventually } from '../../helpers/eventually';
import { RuntimeDir } from '../../helpers/runtime-dir';

const file = (domain: string, rpu = 1): string =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: ${rpu} }\n`;

class Recorder {
  readonly snapshots: ConfigSnapshot[] = [];
  readonly rejections: (readonly ConfigError[])[] = [];
  onSnapshot(snapshot: ConfigSnapshot): void {
    this.snapshots.push(snapshot);
  }
  onRejected(errors: readonly ConfigError[]): void {
    this.rejections.push(errors);
  }
  get domains(): readonly string[] | undefined {
    return this.snapshots.at(-1)?.domains;
  }
}

const providers: FileConfigProvider[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const p of providers.splice(0)) await p.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(
  settings: Partial<FileSourceSettings> & { runtimeRoot: string },
  logger = new MemoryLogger(),
  stats = new StatsStore(),
): Promise<Recorder> {
  const recorder = new Recorder();
  const provider = new FileConfigProvider({
    settings: {
      type: 'FILE',
      runtimeSubdirectory: '',
      runtimeAppDirectory: 'config',
      ignoreDotFiles: false,
      watchRoot: false,
      ...settings,
    },
    compile: { stats: new StatsStore(), mergeDomainConfig: false, sanitizeDots: false },
    logger,
    loaderStats: {
      loadAttempts: stats.counter(STAT.runtimeLoadAttempts),
      loadFailures: stats.counter(STAT.runtimeLoadFailures),
      numValues: stats.gauge(STAT.runtimeNumValues),
    },
    debounceMs: 20,
  });
  providers.push(provider);
  await provider.start(recorder);
  return recorder;
}

function tempRoot(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'rl-provider-'));
  dirs.push(root);
  mkdirSync(path.join(root, 'config'));
  return root;
}

it('reads .yaml and .yml files recursively, skipping other files', async () => {
  const root = tempRoot();
  writeFileSync(path.join(root, 'config', 'a.yaml'), file('a'));
  writeFileSync(path.join(root, 'config', 'b.yml'), file('b'));
  writeFileSync(path.join(root, 'config', 'README.md'), '# not a config');
  mkdirSync(path.join(root, 'config', 'team'));
  writeFileSync(path.join(root, 'config', 'team', 'c.yaml'), file('c'));
  const logger = new MemoryLogger();
  const recorder = await start({ runtimeRoot: root }, logger);
  expect(recorder.domains).toEqual(['a', 'b', 'c']);
  expect(
    logger.lines.some(
      (l) =>
        l.message === 'skipping a file that is not .yaml or .yml' &&
        l.fields?.file === path.join(root, 'config', 'README.md'),
    ),
  ).toBe(true);
});

it('skips dotfiles only with RUNTIME_IGNOREDOTFILES, and never descends into symlinked directories', async () => {
  const root = tempRoot();
  const data = path.join(root, 'config', '..2026_data');
  mkdirSync(data);
  writeFileSync(path.join(data, 'a.yaml'), file('a'));
  // The Kubernetes ConfigMap layout: ..data links to a dated directory, files link through it.
  symlinkSync(data, path.join(root, 'config', '..data'));
  symlinkSync(path.join('..data', 'a.yaml'), path.join(root, 'config', 'a.yaml'));
  const ignoring = await start({ runtimeRoot: root, ignoreDotFiles: true });
  expect(ignoring.domains).toEqual(['a']);
  const reading = await start({ runtimeRoot: root, ignoreDotFiles: false });
  expect(reading.snapshots).toHaveLength(0);
  expect(reading.rejections[0]?.map((e) => e.code)).toEqual(['DUPLICATE_DOMAIN']);
});

it('reloads on create, write, chmod and remove when RUNTIME_WATCH_ROOT is false', async () => {
  const root = tempRoot();
  const a = path.join(root, 'config', 'a.yaml');
  writeFileSync(a, file('a', 1));
  const recorder = await start({ runtimeRoot: root });
  writeFileSync(path.join(root, 'config', 'b.yaml'), file('b'));
  await eventually(() => recorder.domains?.join() === 'a,b', { what: 'create' });
  writeFileSync(a, file('a', 2));
  await eventually(
    () =>
      recorder.snapshots
        .at(-1)
        ?.findLimit('a', { entries: [{ key: 'k', value: 'x' }], limit: undefined })?.rule
        .requestsPerUnit === 2,
    {
      what: 'write',
    },
  );
  const before = recorder.snapshots.length;
  chmodSync(a, 0o600);
  await eventually(() => recorder.snapshots.length > before, { what: 'chmod' });
  rmSync(path.join(root, 'config', 'b.yaml'));
  await eventually(() => recorder.domains?.join() === 'a', { what: 'remove' });
});

it('reloads on changes in subdirectories, old and new, when RUNTIME_WATCH_ROOT is false', async () => {
  const root = tempRoot();
  const team = path.join(root, 'config', 'team');
  mkdirSync(team);
  writeFileSync(path.join(team, 'c.yaml'), file('c', 1));
  const recorder = await start({ runtimeRoot: root });
  const limitOf = (domain: string): number | undefined =>
    recorder.snapshots
      .at(-1)
      ?.findLimit(domain, { entries: [{ key: 'k', value: 'x' }], limit: undefined })?.rule
      .requestsPerUnit;
  expect(limitOf('c')).toBe(1);
  writeFileSync(path.join(team, 'c.yaml'), file('c', 2));
  await eventually(() => limitOf('c') === 2, { what: 'a write in a subdirectory' });
  const later = path.join(team, 'later');
  mkdirSync(later);
  writeFileSync(path.join(later, 'd.yaml'), file('d', 1));
  await eventually(() => recorder.domains?.join() === 'c,d', { what: 'a new subdirectory' });
  writeFileSync(path.join(later, 'd.yaml'), file('d', 3));
  await eventually(() => limitOf('d') === 3, { what: 'a write in the new subdirectory' });
  rmSync(later, { recursive: true });
  await eventually(() => recorder.domains?.join() === 'c', { what: 'the subdirectory to go' });
});

it('debounces a burst of changes into few loads', async () => {
  const root = tempRoot();
  const recorder = await start({ runtimeRoot: root });
  const before = recorder.snapshots.length;
  for (let i = 0; i < 20; i++)
    writeFileSync(path.join(root, 'config', `f${i}.yaml`), file(`d${i}`));
  await eventually(() => recorder.domains?.length === 20, { what: 'all files' });
  expect(recorder.snapshots.length - before).toBeLessThan(5);
});

it('reloads only when the root symlink is repointed when RUNTIME_WATCH_ROOT is true', async () => {
  const runtime = new RuntimeDir({ 'a.yaml': file('a') }, true);
  dirs.push(runtime.base);
  const recorder = await start({
    runtimeRoot: runtime.root,
    runtimeSubdirectory: 'ratelimit',
    watchRoot: true,
  });
  expect(recorder.domains).toEqual(['a']);
  runtime.repoint({ 'a.yaml': file('a'), 'b.yaml': file('b') });
  await eventually(() => recorder.domains?.join() === 'a,b', { what: 'the swap' });
});

it('refuses a bad load with every problem and keeps going, and reads a directory that appears later', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'rl-provider-'));
  dirs.push(root);
  const recorder = await start({ runtimeRoot: root });
  expect(recorder.rejections[0]?.[0]?.code).toBe('READ_FAILED');
  expect(recorder.rejections[0]?.[0]?.message).toMatch(
    /cannot read the configuration directory: ENOENT/,
  );
  mkdirSync(path.join(root, 'config'));
  writeFileSync(path.join(root, 'config', 'x.yaml'), 'domain: x\ndescriptors:\n  - key: ""\n');
  writeFileSync(path.join(root, 'config', 'y.yaml'), 'domain: [');
  await eventually(() => recorder.rejections.some((r) => r.length === 2), {
    what: 'a rejection of both files',
  });
  const last = recorder.rejections.find((r) => r.length === 2) ?? [];
  expect(last.map((e) => e.code).sort()).toEqual(['EMPTY_KEY', 'YAML_PARSE']);
  writeFileSync(path.join(root, 'config', 'x.yaml'), file('x'));
  rmSync(path.join(root, 'config', 'y.yaml'));
  await eventually(() => recorder.domains?.join() === 'x', { what: 'the fixed directory' });
});

it('counts loads, unreadable directories and the files found, under the reference runtime names', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'rl-provider-'));
  dirs.push(root);
  const stats = new StatsStore();
  const counter = (name: string): number | undefined => stats.snapshot().counters.get(name);
  await start({ runtimeRoot: root }, new MemoryLogger(), stats);
  expect(counter('runtime.load_attempts')).toBe(1);
  expect(counter('runtime.load_failures')).toBe(1);
  mkdirSync(path.join(root, 'config'));
  writeFileSync(path.join(root, 'config', 'README.md'), '# not a config');
  writeFileSync(path.join(root, 'config', 'a.yaml'), file('a'));
  await eventually(() => stats.snapshot().gauges.get('runtime.num_values') === 2, {
    what: 'both files counted',
  });
  expect(counter('runtime.load_attempts')).toBeGreaterThanOrEqual(2);
  expect(counter('runtime.load_failures')).toBe(1);
});

it('survives a reload that throws: logs it, keeps serving, and reloads on the next change', async () => {
  const root = tempRoot();
  writeFileSync(path.join(root, 'config', 'a.yaml'), file('a'));
  const logger = new MemoryLogger();
  const recorder = await start({ runtimeRoot: root }, logger);
  let isBroken = true;
  const onSnapshot = recorder.onSnapshot.bind(recorder);
  recorder.onSnapshot = (snapshot) => {
    if (isBroken) {
      isBroken = false;
      throw new Error('a listener that breaks');
    }
    onSnapshot(snapshot);
  };
  writeFileSync(path.join(root, 'config', 'b.yaml'), file('b'));
  await eventually(() => logger.lines.some((l) => l.fields?.error === 'a listener that breaks'), {
    what: 'the failed load to be logged',
  });
  expect(recorder.domains).toEqual(['a']);
  writeFileSync(path.join(root, 'config', 'c.yaml'), file('c'));
  await eventually(() => recorder.domains?.join() === 'a,b,c', { what: 'the next reload' });
});
