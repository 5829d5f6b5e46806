// The README's install sections: every command names files that exist and values or settings
// the chart and the service accept, and each Helm command renders with helm (which must be installed).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  CHART_DIR,
  compileValuesSchema,
  mergeValues,
  readYamlFile,
  PACKAGE,
  ROOT,
  schemaErrors,
  valuesWith,
  type Values,
} from '../../helpers/deploy/chart';
import { parseManifests } from '../../helpers/deploy/kubernetes-objects';
import { applySet, commands, section } from '../../helpers/deploy/readme-commands';
import { expectServiceInstall } from '../../helpers/deploy/service-manifests';
import { runProgram } from '../../helpers/programs';
import { unreadNames } from '../../helpers/deploy/settings-names';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const VERSION = PACKAGE.version;

/** The values a `helm install NAME CHART [-f file] [--set ...]` command installs with. */
function helmValues(words: readonly string[]): Values {
  expect(path.resolve(ROOT, words[3]!)).toBe(CHART_DIR);
  let values = valuesWith();
  for (let i = 4; i < words.length; i += 2) {
    const [flag, arg] = [words[i], words[i + 1]!];
    if (flag === '-f') values = mergeValues(values, readYamlFile(path.join(ROOT, arg)));
    else if (flag === '--set') values = applySet(values, arg);
    else throw new Error(`a helm flag this test does not read: ${String(flag)}`);
  }
  return values;
}

describe('README install sections', () => {
  test('Install with Helm: commands for Redis single, sentinel and cluster and for xDS, all valid', () => {
    const helmCommands = commands(section(README, 'Install with Helm')).filter(
      (w) => w[0] === 'helm',
    );
    const validate = compileValuesSchema();
    const modes = new Set<string>();
    for (const words of helmCommands) {
      expect(words.slice(0, 2)).toEqual(['helm', 'install']);
      const values = helmValues(words);
      expect([words.join(' '), validate(values) ? [] : schemaErrors(validate)]).toEqual([
        words.join(' '),
        [],
      ]);
      const config = values.config as { type: string };
      const redis = values.redis as { type: string };
      modes.add(config.type === 'xds' ? 'xds' : `redis ${redis.type}`);

      const run = runProgram('helm', ['template', ...words.slice(2)], {
        cwd: ROOT,
        timeout: 60_000,
      });
      expect([run.status, run.stderr]).toEqual([0, '']);
      expectServiceInstall(parseManifests(run.stdout, words.join(' ')), {
        deployment: words[2]!,
        service: words[2]!,
        image: `ratelimit-ts:${VERSION}`,
      });
    }
    expect([...modes].sort()).toEqual(['redis cluster', 'redis sentinel', 'redis single', 'xds']);
  });

  test('Run with Kustomize: the image built and pushed, then the base and both overlays', () => {
    const [build, push, ...applies] = commands(section(README, 'Run with Kustomize'));
    // The image is built and pushed first, under the name the base's `images:` entry renames.
    const base = readYamlFile(
      path.join(ROOT, 'deploy', 'kubernetes', 'base', 'kustomization.yaml'),
    );
    const [image] = base.images as { name: string; newTag: string }[];
    const tag = build?.[build.indexOf('-t') + 1] ?? '';
    expect(build?.slice(0, 4)).toEqual(['docker', 'build', '-f', 'deploy/Dockerfile']);
    expect(build?.at(-1)).toBe('.');
    expect(tag).toMatch(new RegExp(`/${image!.name}:${image!.newTag}$`));
    expect(image!.newTag).toBe(VERSION);
    expect(push).toEqual(['docker', 'push', tag]);
    const dirs = applies.map((w) => {
      expect(w.slice(0, 3)).toEqual(['kubectl', 'apply', '-k']);
      return w[3]!;
    });
    expect(dirs.sort()).toEqual([
      'deploy/kubernetes/base',
      'deploy/kubernetes/overlays/redis-sentinel',
      'deploy/kubernetes/overlays/xds',
    ]);
    for (const dir of dirs)
      expect(existsSync(path.join(ROOT, dir, 'kustomization.yaml'))).toBe(true);
  });

  test('Run on a single host: settings the service reads, the image read-only with its rules mounted', () => {
    const cmds = commands(section(README, 'Run on a single host'));
    const env = new Map<string, string>();
    for (const words of cmds) {
      for (const w of words) {
        const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(w);
        if (assignment !== null) env.set(assignment[1]!, assignment[2]!);
      }
      words.forEach((w, i) => {
        if (w === '-e') {
          const [name, value = ''] = words[i + 1]!.split('=');
          env.set(`docker:${name!}`, value);
        }
      });
    }
    expect(unreadNames([...env.keys()].map((k) => k.replace(/^docker:/, '')))).toEqual([]);
    // The release tarball, installed as a file: the package is never fetched by its name.
    expect(
      cmds.some((w) => w.join(' ') === 'npm pack && npm install -g ./ratelimit-ts-*.tgz'),
    ).toBe(true);
    // The service itself, not npm, gets the process manager's signals: no npx in production.
    expect(
      cmds.some((w) => w.at(-1) === 'ratelimit' && w.includes('REDIS_URL=localhost:6379')),
    ).toBe(true);
    expect(cmds.some((w) => w.includes('npx') && w.includes('ratelimit'))).toBe(false);

    const build = cmds.find((w) => w[0] === 'docker' && w[1] === 'build')!;
    expect(build.slice(build.indexOf('-f'), build.indexOf('-f') + 2)).toEqual([
      '-f',
      'deploy/Dockerfile',
    ]);
    const run = cmds.find((w) => w[0] === 'docker' && w[1] === 'run')!;
    expect(run).toContain('--read-only');
    const mount = run[run.indexOf('-v') + 1]!.split(':');
    const rulesDir = path.posix.join(
      env.get('docker:RUNTIME_ROOT') ?? '',
      env.get('docker:RUNTIME_SUBDIRECTORY') ?? '',
      env.get('docker:RUNTIME_APPDIRECTORY') ?? 'config',
    );
    expect(mount.slice(1)).toEqual([rulesDir, 'ro']);
    expect(existsSync(path.join(ROOT, mount[0]!.replace('$PWD/', '')))).toBe(true);
    expect(run[run.length - 1]).toBe(`ratelimit-ts:${VERSION}`);
  });

  test('Run with Envoy: the example directory and its compose file', () => {
    const text = section(README, 'Run with Envoy');
    const cd = commands(text).find((w) => w[0] === 'cd')!;
    expect(cd.slice(0, 2)).toEqual(['cd', 'examples/envoy']);
    expect(cd.slice(2)).toEqual(['&&', 'docker', 'compose', 'up', '--build', '-d']);
    for (const file of ['compose.yaml', 'envoy.yaml', 'README.md'])
      expect(existsSync(path.join(ROOT, 'examples', 'envoy', file))).toBe(true);
    expect(text).toMatch(/failure_mode_deny/);
  });
});
