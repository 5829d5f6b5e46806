// The commands Envoy Gateway, the Helm chart and the Kustomize manifests run, found and run in
// the image's layout: the packed package at /app and the runtime stage's RUN steps replayed into
// a temporary root (no container engine runs here).
//
// The peers read:
// - envoyproxy/ratelimit Dockerfile: the final stage copies one program, the service, to
//   /bin/ratelimit (its Makefile builds ratelimit_client and ratelimit_config_check into ./bin of
//   the checkout only; the image has neither).
// - envoyproxy/gateway internal/infrastructure/kubernetes/ratelimit/resource.go (the container
//   built by expectedRateLimitContainers) and its golden testdata/deployments/default.yaml:
//   the rate limit container's `command` is `/bin/ratelimit`, with no args, so the image's
//   ENTRYPOINT and CMD are not used.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHART_DIR, ciValuesFiles, PACKAGE, ROOT } from '../../helpers/deploy/chart';
import { execForm, parseDockerfile } from '../../helpers/deploy/dockerfile';
import { parseManifests, podSpec, type KubeObject } from '../../helpers/deploy/kubernetes-objects';
import { runProgram } from '../../helpers/programs';

const stages = parseDockerfile(readFileSync(path.join(ROOT, 'deploy', 'Dockerfile'), 'utf8'));
const runtime = stages[stages.length - 1]!;

/** What Envoy Gateway's rate limit Deployment runs (see the header). */
const ENVOY_GATEWAY_COMMAND = ['/bin/ratelimit'];
/** PATH in the official node images (Docker's default for Debian and Alpine images). */
const IMAGE_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
/**
 * Programs of the base image itself (Debian's dash and coreutils, Alpine's busybox, Node) that
 * the manifests may run, e.g. `sleep` in a preStop hook; everything else must be this package's.
 */
const BASE_IMAGE_PROGRAMS = new Set(['sh', 'sleep', 'node', 'env']);
/** Where this image's containers are recognised in rendered manifests. */
const OWN_IMAGE = /(^|\/)ratelimit-ts(:|@|$)/;

let root = '';

/** Rewrites the absolute paths a RUN step writes to (/app, /usr, /bin) into the temp root. */
function rooted(command: string): string {
  return command.replace(/(^|[\s'"=])\/(?=(app|usr|bin)\b)/g, `$1${root}/`);
}

/** npm pack's package unpacked at ROOT/app, then the runtime stage's RUN steps replayed. */
function buildLayout(): void {
  root = mkdtempSync(path.join(os.tmpdir(), 'rl-image-'));
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', root], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  const tarball = path.join(root, `ratelimit-ts-${PACKAGE.version}.tgz`);
  const untar = spawnSync('tar', ['-xzf', tarball, '-C', root], { encoding: 'utf8' });
  if (untar.status !== 0) throw new Error(`tar failed:\n${untar.stderr}`);
  // The COPY --from=build /out/package /app; the production dependencies stand in by a link.
  spawnSync('mv', [path.join(root, 'package'), path.join(root, 'app')]);
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'app', 'node_modules'));
  for (const dir of IMAGE_PATH) mkdirSync(path.join(root, dir), { recursive: true });
  for (const step of runtime.instructions.filter((i) => i.keyword === 'RUN')) {
    const run = spawnSync('sh', ['-c', rooted(step.args)], {
      cwd: path.join(root, 'app'),
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (run.status !== 0) throw new Error(`RUN ${step.args} failed:\n${run.stderr}`);
  }
}

/** A command's program as a file of the layout, looked up on the image's PATH when bare. */
function resolve(program: string): string | undefined {
  const candidates = program.startsWith('/')
    ? [program]
    : IMAGE_PATH.map((dir) => path.posix.join(dir, program));
  return candidates.map((p) => path.join(root, p)).find((p) => existsSync(p));
}

/** A command the image runs: its program, and where it came from for the failure message. */
interface Command {
  readonly source: string;
  readonly words: readonly string[];
}

/** The image's own command when a container names none: ENTRYPOINT then CMD. */
function imageCommand(): string[] {
  const words = (keyword: string): string[] =>
    runtime.instructions.filter((i) => i.keyword === keyword).flatMap((i) => execForm(i.args));
  return [...words('ENTRYPOINT'), ...words('CMD')];
}

/** Every command a manifest runs in a container of this image (its own, hooks, exec probes). */
function manifestCommands(objects: readonly KubeObject[], source: string): Command[] {
  const out: Command[] = [];
  for (const deployment of objects.filter((o) => o.kind === 'Deployment')) {
    for (const c of podSpec(deployment).containers) {
      if (!OWN_IMAGE.test(c.image)) continue;
      const where = `${source} ${deployment.metadata.name}/${c.name}`;
      out.push({ source: where, words: c.command ?? imageCommand() });
      const extra = c as {
        lifecycle?: Record<string, { exec?: { command: string[] } } | undefined>;
      };
      for (const [hook, handler] of Object.entries(extra.lifecycle ?? {}))
        if (handler?.exec !== undefined)
          out.push({ source: `${where} ${hook}`, words: handler.exec.command });
      for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe])
        if (probe?.exec !== undefined)
          out.push({ source: `${where} probe`, words: probe.exec.command });
    }
  }
  return out;
}

function helmCommands(): Command[] {
  const files = [undefined, ...ciValuesFiles()];
  return files.flatMap((file) => {
    const args = ['template', 'rl', CHART_DIR, ...(file === undefined ? [] : ['-f', file])];
    const run = runProgram('helm', args, { timeout: 60_000 });
    if (run.status !== 0) throw new Error(`helm ${args.join(' ')} failed:\n${run.stderr}`);
    const name = `helm ${file === undefined ? 'values.yaml' : path.basename(file)}`;
    return manifestCommands(parseManifests(run.stdout, name), name);
  });
}

function kustomizeCommands(): Command[] {
  const dirs = ['base', 'overlays/redis-sentinel', 'overlays/xds'];
  return dirs.flatMap((dir) => {
    const full = path.join(ROOT, 'deploy', 'kubernetes', dir);
    const run = runProgram('kubectl', ['kustomize', full], { timeout: 60_000 });
    if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${run.stderr}`);
    return manifestCommands(parseManifests(run.stdout, dir), `kustomize ${dir}`);
  });
}

describe('the image layout against the commands its users run', () => {
  beforeAll(buildLayout, 180_000);
  afterAll(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
  });

  test('/bin/ratelimit is the service, as in the reference image', () => {
    const file = resolve('/bin/ratelimit');
    expect(file).toBeDefined();
    expect(realpathSync(file!)).toBe(realpathSync(path.join(root, 'app', PACKAGE.bin.ratelimit!)));
  });

  test("every program Envoy Gateway's, the chart's and Kustomize's containers run is there", () => {
    const commands = [
      { source: 'Envoy Gateway', words: ENVOY_GATEWAY_COMMAND },
      { source: 'image CMD', words: imageCommand() },
      ...helmCommands(),
      ...kustomizeCommands(),
    ];
    expect(commands.length).toBeGreaterThan(10);
    const ours = new Set<string>();
    for (const { source, words } of commands) {
      const program = words[0] ?? '';
      if (BASE_IMAGE_PROGRAMS.has(path.posix.basename(program))) continue;
      const file = resolve(program);
      expect([source, program, file !== undefined]).toEqual([source, program, true]);
      if (file !== undefined) ours.add(file);
    }
    // Each of this package's programs starts from its image path (shebang, mode, requires):
    // `-h` prints its usage and starts nothing.
    for (const file of ours) {
      const run = spawnSync(file, ['-h'], {
        env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` },
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect([file, run.status, run.stdout]).toEqual([file, 0, expect.stringMatching(/usage/i)]);
    }
    expect(ours.size).toBeGreaterThanOrEqual(2);
  });

  test('every bin of package.json is on the image PATH under its own name', () => {
    for (const [name, file] of Object.entries(PACKAGE.bin)) {
      const found = resolve(name);
      expect([name, found === undefined ? '' : realpathSync(found)]).toEqual([
        name,
        realpathSync(path.join(root, 'app', file)),
      ]);
    }
  });
});
