// deploy/kubernetes rendered by `kubectl kustomize` and validated against the Kubernetes schemas.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { parse } from 'yaml';
import { PACKAGE, ROOT } from '../../helpers/deploy/chart';
import { configCheckDirectory } from '../../helpers/deploy/config-check';
import {
  container,
  envOf,
  findObject,
  parseManifests,
  podSpec,
  validateManifests,
  type KubeObject,
} from '../../helpers/deploy/kubernetes-objects';
import { expectServiceInstall } from '../../helpers/deploy/service-manifests';
import { restrictedProblems } from '../../helpers/deploy/pod-security';
import { runProgram } from '../../helpers/programs';
import { killAndWait, spawnServer } from '../../helpers/child-process';
import { eventually } from '../../helpers/eventually';

const KUSTOMIZE_DIR = path.join(ROOT, 'deploy', 'kubernetes');
const VERSION = PACKAGE.version;
const IMAGE = `ratelimit-ts:${VERSION}`;
/** The label the Sentinel overlay puts on everything it renders: it is a demo. */
const DEMO_LABEL = 'ratelimit-ts/demo';

/** `kubectl kustomize DIR`; .ci/run installs Debian's kubectl where it is missing. */
function kustomize(dir: string): KubeObject[] {
  const run = runProgram('kubectl', ['kustomize', path.join(KUSTOMIZE_DIR, dir)], {
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir} failed:\n${run.stderr}`);
  return parseManifests(run.stdout, dir);
}

/** Renders a kustomization and checks the service's install in it. */
function renderInstall(dir: string): {
  objects: KubeObject[];
  env: Map<string, string | undefined>;
} {
  const objects = kustomize(dir);
  const c = expectServiceInstall(objects, {
    deployment: 'ratelimit',
    service: 'ratelimit',
    image: IMAGE,
  });
  return { objects, env: envOf(c) };
}

/** A Kubernetes memory quantity (Ki, Mi, Gi or plain bytes) in bytes. */
function bytesOf(quantity: string): number {
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(quantity);
  if (match === null) throw new Error(`a memory quantity this test does not read: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * unit;
}

/** The TCP port a Service named `name` offers (its only port, or the named one). */
function servicePort(objects: readonly KubeObject[], name: string): number {
  const ports = (findObject(objects, 'Service', name).spec as { ports: { port: number }[] }).ports;
  expect(ports).toHaveLength(1);
  return ports[0]!.port;
}

describe('Kustomize (deploy/kubernetes)', () => {
  beforeAll(() => {
    const version = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
    console.log(
      `kustomize checks run with: ${version.stdout.trim().replace(/\n/g, '; ') || 'no kubectl'}`,
    );
  });

  test('base: file mode next to Redis, every object valid', () => {
    const { objects, env } = renderInstall('base');
    expect(env.get('BACKEND_TYPE')).toBe('redis');
    expect(env.get('REDIS_URL')).toBe(`redis:${servicePort(objects, 'redis')}`);
    expect(container(findObject(objects, 'Deployment', 'redis'), 'redis').image).toMatch(
      /^redis:\d+\.\d+\.\d+$/,
    );

    // The ConfigMap carries every rule file of base/rules, and they pass the service's checker.
    const rulesDir = path.join(KUSTOMIZE_DIR, 'base', 'rules');
    const data = findObject(objects, 'ConfigMap', 'ratelimit-rules').data as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual(readdirSync(rulesDir).sort());
    const check = configCheckDirectory(rulesDir);
    expect([check.status, check.output]).toEqual([0, expect.stringContaining('example')]);
  });

  test("base: Redis keeps its data below the container's memory limit, evicting by expiry", async () => {
    const redis = container(findObject(kustomize('base'), 'Deployment', 'redis'), 'redis');
    const limit = bytesOf(redis.resources?.limits?.memory ?? '');
    // redis-server itself reads the manifest's arguments, on a socket of this test's own.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rl-kustomize-redis-'));
    const socket = path.join(dir, 'redis.sock');
    const server = await spawnServer('redis-server', [
      ...(redis.args ?? []),
      '--port',
      '0',
      '--unixsocket',
      socket,
      '--dir',
      dir,
    ]);
    const client = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      await eventually(async () => client.ping(), {
        what: `redis-server with the base's arguments:\n${server.output()}`,
      });
      const config = async (name: string): Promise<string> =>
        (await client.config('GET', name))[1] ?? '';
      const maxmemory = Number(await config('maxmemory'));
      // Redis's own buffers, fragmentation and the copy-on-write of a fork come on top of
      // maxmemory: a quarter of the limit, at least 32 MiB, is left for them.
      expect(maxmemory).toBeGreaterThan(0);
      expect(maxmemory).toBeLessThanOrEqual(Math.min(limit * 0.8, limit - 32 * 2 ** 20));
      // Every counter has an expiry: the one nearest it goes first, as in the memory backend.
      expect(await config('maxmemory-policy')).toBe('volatile-ttl');
    } finally {
      client.disconnect();
      await killAndWait(server.child);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('overlays/xds: configuration over ADS from the management server beside it', () => {
    const { objects, env } = renderInstall('overlays/xds');
    expect(env.get('CONFIG_TYPE')).toBe('GRPC_XDS_SOTW');
    expect(env.get('CONFIG_GRPC_XDS_SERVER_URL')).toBe(
      `ratelimit-xds:${servicePort(objects, 'ratelimit-xds')}`,
    );
    expect(env.get('CONFIG_GRPC_XDS_NODE_ID')).toEqual(expect.any(String));
    expect([...env.keys()].filter((n) => n.startsWith('RUNTIME_'))).toEqual([]);
    expect(podSpec(findObject(objects, 'Deployment', 'ratelimit')).volumes ?? []).toEqual([]);

    // The simulator serves the rule ConfigMap from the same image, on the Service's port.
    const sim = container(findObject(objects, 'Deployment', 'ratelimit-xds'), 'xds-server');
    expect(sim.image).toBe(IMAGE);
    expect(Object.keys(PACKAGE.bin)).toContain(sim.command?.[0]);
    const args = sim.args ?? [];
    const configDir = args[args.indexOf('-config_dir') + 1];
    expect(sim.volumeMounts?.map((m) => m.mountPath)).toContain(configDir);
    expect(Number(args[args.indexOf('-port') + 1])).toBe(servicePort(objects, 'ratelimit-xds'));
    expect(args[args.indexOf('-host') + 1]).toBe('0.0.0.0');
  });

  test('overlays/redis-sentinel: the master found through Sentinel', () => {
    const { objects, env } = renderInstall('overlays/redis-sentinel');
    expect(env.get('REDIS_TYPE')).toBe('sentinel');
    const [master, ...sentinels] = (env.get('REDIS_URL') ?? '').split(',');
    expect(sentinels).toEqual([`redis-sentinel:${servicePort(objects, 'redis-sentinel')}`]);

    // The sentinel monitors the base's Redis under the master name the service asks for.
    const sentinel = container(findObject(objects, 'Deployment', 'redis-sentinel'), 'sentinel');
    const script = (sentinel.args ?? []).join('\n');
    expect(script).toContain(`sentinel monitor ${master} redis ${servicePort(objects, 'redis')} 1`);
    expect(script).toContain(`port ${servicePort(objects, 'redis-sentinel')}`);
  });

  test.each([['base'], ['overlays/xds'], ['overlays/redis-sentinel']])(
    '%s: every pod passes the "restricted" pod security level',
    (dir) => {
      const objects = kustomize(dir);
      expect(objects.filter((o) => o.kind === 'Deployment').length).toBeGreaterThanOrEqual(2);
      expect(restrictedProblems(objects)).toEqual([]);
    },
  );

  test('the restricted check refuses what the admission controller would', () => {
    const [redis] = parseManifests(
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: r}\nspec:\n  template:\n    spec:\n      securityContext: {runAsUser: 0}\n      volumes: [{name: h, hostPath: {path: /}}]\n      containers: [{name: c, securityContext: {capabilities: {add: [SYS_ADMIN]}}}]\n',
      'r',
    );
    expect(restrictedProblems([redis!])).toEqual([
      'Deployment/r: volume h: type hostPath is not allowed',
      'Deployment/r: container c: allowPrivilegeEscalation is not false',
      'Deployment/r: container c: capabilities do not drop ALL',
      'Deployment/r: container c: capabilities add SYS_ADMIN',
      'Deployment/r: container c: runAsNonRoot is not true',
      'Deployment/r: container c: runAsUser is 0',
      'Deployment/r: container c: seccompProfile is not RuntimeDefault (or Localhost)',
    ]);
  });

  test('overlays/redis-sentinel says it is a demo, in its README and on every object', () => {
    const objects = kustomize('overlays/redis-sentinel');
    for (const o of objects)
      expect([
        `${o.kind}/${o.metadata.name}`,
        (o.metadata.labels as Record<string, string> | undefined)?.[DEMO_LABEL],
      ]).toEqual([`${o.kind}/${o.metadata.name}`, 'one-sentinel-no-replica']);
    const readme = readFileSync(
      path.join(KUSTOMIZE_DIR, 'overlays', 'redis-sentinel', 'README.md'),
      'utf8',
    );
    expect(readme).toMatch(/demo/i);
    expect(readme).toMatch(/quorum 1/);
  });

  test('the validation refuses what the API server would', () => {
    const [bad] = parseManifests(
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: bad}\nspec:\n  template:\n    spec:\n      containers: [{name: c, ports: [{containerPort: http}]}]\n',
      'bad',
    );
    const problems = validateManifests([bad!]).join('\n');
    expect(problems).toMatch(/Deployment\/bad: .*selector/);
    expect(validateManifests([{ ...bad!, kind: 'Deploymnet' }])).toEqual([
      'Deploymnet/bad: no validator for apps/v1/Deploymnet',
    ]);
  });

  test('every kustomization lists only files that exist and pins its images', () => {
    for (const dir of ['base', 'overlays/xds', 'overlays/redis-sentinel']) {
      const k = parse(
        readFileSync(path.join(KUSTOMIZE_DIR, dir, 'kustomization.yaml'), 'utf8'),
      ) as Record<string, unknown>;
      // Fields kubectl 1.20's kustomize (v2.0.3) does not know would fail there.
      expect(
        Object.keys(k).filter((f) =>
          ['labels', 'patches', 'replacements', 'components'].includes(f),
        ),
      ).toEqual([]);
      for (const image of (k.images ?? []) as { newTag: string }[])
        expect(image.newTag).toBe(VERSION);
    }
  });
});
