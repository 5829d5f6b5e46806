// A ConfigMap mounted with the deploy manifests' settings reloads in place when the kubelet
// swaps it: the kubelet's atomic writer layout and update order, reproduced on disk.
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../../helpers/deploy/chart';
import {
  container,
  envOf,
  findObject,
  parseManifests,
} from '../../helpers/deploy/kubernetes-objects';
import { eventually } from '../../helpers/eventually';
import { ServiceProcess } from '../../helpers/service-process';

/** The rule-file settings of the Kustomize base (the chart writes the same, see its tests). */
function manifestRuntimeEnv(): Map<string, string | undefined> {
  const file = path.join(ROOT, 'deploy', 'kubernetes', 'base', 'ratelimit.yaml');
  const objects = parseManifests(readFileSync(file, 'utf8'), file);
  return envOf(container(findObject(objects, 'Deployment', 'ratelimit'), 'ratelimit'));
}

function rules(limit: number): string {
  return `domain: mounted\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: ${limit} }\n`;
}

/**
 * A ConfigMap volume as the kubelet writes it: the files in a timestamped directory, `..data`
 * pointing at it, and each file a symlink through `..data`. An update writes a new directory,
 * points `..data_tmp` at it, renames that over `..data`, then drops the old directory.
 */
class KubeletVolume {
  private generation = 0;
  private current: string | undefined;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  update(files: Record<string, string>): void {
    this.generation += 1;
    const stamped = `..2026_01_01_00_00_00.${this.generation}`;
    mkdirSync(path.join(this.dir, stamped));
    for (const [name, text] of Object.entries(files))
      writeFileSync(path.join(this.dir, stamped, name), text);
    symlinkSync(stamped, path.join(this.dir, '..data_tmp'));
    renameSync(path.join(this.dir, '..data_tmp'), path.join(this.dir, '..data'));
    for (const name of Object.keys(files)) {
      try {
        symlinkSync(path.join('..data', name), path.join(this.dir, name));
      } catch {
        // The link exists from an earlier generation; it follows ..data.
      }
    }
    if (this.current !== undefined) rmSync(path.join(this.dir, this.current), { recursive: true });
    this.current = stamped;
  }

  remove(name: string): void {
    unlinkSync(path.join(this.dir, name));
  }
}

describe('rule files from a ConfigMap', () => {
  const base = mkdtempSync(path.join(os.tmpdir(), 'rl-configmap-'));
  afterAll(() => {
    rmSync(base, { recursive: true, force: true });
  });

  async function boot(
    root: string,
    overrides: Record<string, string> = {},
  ): Promise<{ service: ServiceProcess; volume: KubeletVolume }> {
    const env = manifestRuntimeEnv();
    const settings: Record<string, string> = { BACKEND_TYPE: 'memory', RUNTIME_ROOT: root };
    for (const name of [
      'RUNTIME_SUBDIRECTORY',
      'RUNTIME_APPDIRECTORY',
      'RUNTIME_WATCH_ROOT',
      'RUNTIME_IGNOREDOTFILES',
    ])
      settings[name] = env.get(name) ?? '';
    const volume = new KubeletVolume(
      path.join(root, settings.RUNTIME_SUBDIRECTORY!, settings.RUNTIME_APPDIRECTORY!),
    );
    volume.update({ 'mounted.yaml': rules(1) });
    const service = await ServiceProcess.start({ env: { ...settings, ...overrides } });
    return { service, volume };
  }

  test('load once and reload on the kubelet swap, with the manifests settings', async () => {
    const { service, volume } = await boot(path.join(base, 'manifest'));
    try {
      const rlconfig = async (): Promise<string> =>
        (await fetch(service.debugUrl('/rlconfig'))).text();
      expect(await rlconfig()).toBe(
        'mounted.k: unit=MINUTE requests_per_unit=1, shadow_mode: false, quota_mode: false\n',
      );

      volume.update({ 'mounted.yaml': rules(7) });
      await eventually(async () => (await rlconfig()).includes('requests_per_unit=7'), {
        what: 'the swapped file to load',
      });

      // A second file arrives with the next swap; the loader reads each file once.
      volume.update({
        'mounted.yaml': rules(7),
        'other.yaml':
          'domain: other\ndescriptors:\n  - key: o\n    rate_limit: { unit: second, requests_per_unit: 2 }\n',
      });
      await eventually(
        async () => (await rlconfig()).includes('other.o: unit=SECOND requests_per_unit=2'),
        { what: 'the added file' },
      );
      expect(service.logs).not.toMatch(/refused|duplicate/i);
      const decision = await service.json({
        domain: 'other',
        descriptors: [{ entries: [{ key: 'o', value: 'x' }] }],
      });
      expect(decision.status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  test("without RUNTIME_IGNOREDOTFILES the kubelet's directories load every domain twice", async () => {
    const { service } = await boot(path.join(base, 'dotfiles'), {
      RUNTIME_IGNOREDOTFILES: 'false',
    });
    try {
      expect(service.logs).toMatch(/duplicate domain 'mounted'/);
    } finally {
      await service.stop();
    }
  });
});
