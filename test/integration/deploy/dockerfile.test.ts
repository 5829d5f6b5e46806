// deploy/Dockerfile checked statically (no container engine runs here) against the package
// npm pack builds, and the image's HEALTHCHECK bin run against a real service.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE, ROOT } from '../../helpers/deploy/chart';
import {
  copySources,
  execForm,
  parseDockerfile,
  type Stage,
} from '../../helpers/deploy/dockerfile';
import { unusedPort } from '../../helpers/ports';
import { ServiceProcess } from '../../helpers/service-process';

const stages = parseDockerfile(readFileSync(path.join(ROOT, 'deploy', 'Dockerfile'), 'utf8'));
const runtime = stages[stages.length - 1]!;
const pkg = PACKAGE;
const HEALTHCHECK_BIN = path.join(ROOT, pkg.bin['ratelimit-healthcheck'] ?? 'missing');

let packed: Set<string> | undefined;

/** The files `npm pack` puts in the package (the image installs exactly these). */
function packedFiles(): Set<string> {
  if (packed !== undefined) return packed;
  const run = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`npm pack --dry-run failed:\n${run.stderr}`);
  const [report] = JSON.parse(run.stdout) as [{ files: { path: string }[] }];
  packed = new Set(report.files.map((f) => f.path));
  return packed;
}

function instructions(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** A command word as a path inside the package: a bin name, or a path under /app. */
function packagePath(word: string): string | undefined {
  if (pkg.bin[word] !== undefined) return path.posix.normalize(pkg.bin[word]);
  if (word.startsWith('/app/')) return word.slice('/app/'.length);
  return undefined;
}

function healthcheck(env: Record<string, string>): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [HEALTHCHECK_BIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 10_000,
  });
  return { status: run.status, stderr: run.stderr };
}

describe('deploy/Dockerfile', () => {
  test('every stage runs on the official Node 26 LTS image pinned to a full version', () => {
    // The release .ci/run tests the whole suite on (test/unit/scripts/node-versions.test.ts).
    const names = new Set<string>();
    for (const stage of stages) {
      if (!names.has(stage.image))
        expect(stage.image).toMatch(
          /^node:26\.\d+\.\d+-(bookworm|bookworm-slim|alpine\d\.\d+)(@sha256:[0-9a-f]{64})?$/,
        );
      if (stage.name !== undefined) names.add(stage.name);
    }
    expect(stages.length).toBeGreaterThanOrEqual(2);
    // Built where it runs: the same base image, so native modules match.
    expect(new Set(stages.map((s) => s.image)).size).toBe(1);
  });

  test('the runtime stage runs as a non-root user given by number', () => {
    const users = instructions(runtime, 'USER');
    expect(users).toHaveLength(1);
    const [uid, gid] = users[0]!.split(':');
    expect(Number(uid)).toBeGreaterThan(0);
    expect(gid === undefined || Number(gid) > 0).toBe(true);
  });

  test('the runtime stage gets the packed package with production dependencies only', () => {
    const build = stages.find((s) => s.name !== undefined && s !== runtime)!;
    const copies = runtime.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      // Nothing from the build context: only what the build stage packed and installed.
      expect(copy.keyword).toBe('COPY');
      expect(copy.flags.from).toBe(build.name);
      expect(copySources(copy)).toEqual(['/out/package']);
    }
    const buildRuns = instructions(build, 'RUN').join('\n');
    expect(buildRuns).toMatch(/npm pack .*tar -xzf \S+ -C \/out/s);
    expect(buildRuns).toMatch(/cd \/out\/package\s+&&\s+npm ci --omit=dev/);
    // Sources and tests never reach the build context's copies either.
    const sources = build.instructions.filter((i) => i.keyword === 'COPY').flatMap(copySources);
    expect(sources.filter((s) => /^(test|bench|coverage|node_modules|dist)\b/.test(s))).toEqual([]);

    const files = packedFiles();
    const leaked = [...files].filter(
      (f) => /^(test|bench|src|deploy|docs)\//.test(f) || f.endsWith('.ts'),
    );
    expect(leaked).toEqual([]);
    expect(files.has('dist/src/main.js')).toBe(true);
    expect(
      [...files].filter((f) => f.startsWith('api/') && f.endsWith('.proto')).length,
    ).toBeGreaterThan(5);
    // The debug listener's status page and the simulator's page are read from web/ at run time.
    for (const page of ['web/status.html', 'web/status.js', 'web/sim.html', 'web/common.css'])
      expect([page, files.has(page)]).toEqual([page, true]);
  });

  test('every path the entrypoint, CMD and HEALTHCHECK name exists in the built package', () => {
    const files = packedFiles();
    const words = [
      ...instructions(runtime, 'ENTRYPOINT').flatMap(execForm),
      ...instructions(runtime, 'CMD').flatMap(execForm),
    ];
    const healthchecks = instructions(runtime, 'HEALTHCHECK');
    expect(healthchecks).toHaveLength(1);
    const healthWords = execForm(healthchecks[0]!.replace(/^.*?CMD\s+/, ''));
    expect(healthWords.join(' ')).not.toMatch(/curl|wget/);
    const named = [...words, ...healthWords].map(packagePath).filter((p) => p !== undefined);
    expect(named.length).toBeGreaterThanOrEqual(2);
    for (const file of named) expect([file, files.has(file)]).toEqual([file, true]);

    // Every bin, and what each bin loads, is packed; the image links them all onto PATH.
    for (const [name, file] of Object.entries(pkg.bin)) {
      expect([name, files.has(path.posix.normalize(file))]).toEqual([name, true]);
      for (const m of readFileSync(path.join(ROOT, file), 'utf8').matchAll(
        /require\('\.\.\/([^']+)'\)/g,
      ))
        expect([name, m[1], files.has(m[1]!)]).toEqual([name, m[1], true]);
    }
    expect(instructions(runtime, 'RUN').join('\n')).toMatch(
      /package\.json'\)\.bin.*\/usr\/local\/bin/s,
    );
  });

  test('exposes HTTP, gRPC, debug and Prometheus ports', () => {
    const ports = instructions(runtime, 'EXPOSE').flatMap((a) => a.split(/\s+/));
    expect(ports.sort()).toEqual(['6070', '8080', '8081', '9090']);
  });

  test('.dockerignore keeps everything out of the context but what the build stage copies', () => {
    const patterns = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(patterns[0]).toBe('*');
    const allowed = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
    const copied = stages.flatMap((s) =>
      s.instructions
        .filter((i) => i.keyword === 'COPY' && i.flags.from === undefined)
        .flatMap(copySources),
    );
    for (const source of copied) expect([source, allowed.includes(source)]).toEqual([source, true]);
    expect(allowed.filter((p) => /^(test|node_modules|dist|coverage|\.git)/.test(p))).toEqual([]);
  });

  test('the HEALTHCHECK bin answers 0 for a healthy service and 1 otherwise, with node alone', async () => {
    const service = await ServiceProcess.start({
      env: {
        BACKEND_TYPE: 'memory',
        RUNTIME_ROOT: path.join(ROOT, 'examples'),
        RUNTIME_SUBDIRECTORY: 'ratelimit',
        RUNTIME_WATCH_ROOT: 'false',
      },
    });
    const empty = mkdtempSync(path.join(os.tmpdir(), 'rl-empty-'));
    const unhealthy = await ServiceProcess.start({
      env: {
        BACKEND_TYPE: 'memory',
        RUNTIME_ROOT: empty,
        RUNTIME_APPDIRECTORY: '',
        RUNTIME_WATCH_ROOT: 'false',
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
      },
      waitFor: 'listening',
    });
    try {
      // A wildcard HOST is asked on loopback, as inside a container.
      expect(healthcheck({ HOST: '0.0.0.0', PORT: String(service.ports.http) }).status).toBe(0);
      const refused = healthcheck({ PORT: String(unhealthy.ports.http) });
      expect(refused).toEqual({ status: 1, stderr: expect.stringContaining('answered 500') });
      const closed = healthcheck({ PORT: String(await unusedPort()) });
      expect(closed).toEqual({ status: 1, stderr: expect.stringContaining('ECONNREFUSED') });
    } finally {
      await service.stop();
      await unhealthy.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
