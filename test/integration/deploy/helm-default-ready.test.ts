// A default `helm install` becomes Ready: the chart rendered with its own values.yaml, its
// container started with the env and rule files it renders (only addresses and paths moved to
// this machine), and its readiness probe asked as the kubelet would. The reference service
// (envoyproxy/ratelimit) is Ready with no rules unless HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED
// is set (src/settings/settings.go defaults it to false; src/service/ratelimit.go SetConfig
// fails the config component on a configuration with no domains only when it is set;
// test/server/health_test.go TestHealthyWithAtLeastOneConfigLoaded), so the chart asks for
// rules only when there are rules to wait for.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHART_DIR } from '../../helpers/deploy/chart';
import {
  container,
  envOf,
  findObject,
  parseManifests,
  portOf,
  type Container,
  type KubeObject,
} from '../../helpers/deploy/kubernetes-objects';
import { eventually } from '../../helpers/eventually';
import { LOOPBACK_LISTENERS } from '../../helpers/ports';
import { runProgram } from '../../helpers/programs';
import { RedisServer } from '../../helpers/redis-server';
import { ServiceProcess } from '../../helpers/service-process';

/** `helm template` of the chart; a machine without helm fails naming it (scripts/get-helm.sh). */
function render(...args: string[]): KubeObject[] {
  const run = runProgram('helm', ['template', 'rl', CHART_DIR, ...args], { timeout: 60_000 });
  if (run.status !== 0) throw new Error(`helm template failed: ${run.stderr}`);
  return parseManifests(run.stdout, `helm template ${args.join(' ')}`);
}

function ratelimitContainer(objects: KubeObject[]): Container {
  return container(findObject(objects, 'Deployment', 'rl-ratelimit'), 'ratelimit');
}

describe('the chart with its default values', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rl-helm-default-'));
  let redis: RedisServer | undefined;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('becomes Ready with no rules, Redis answering at the address it names', async () => {
    const objects = render();
    const c = ratelimitContainer(objects);
    const env = envOf(c);

    // The rule files' ConfigMap as the kubelet mounts it, at the path the container reads.
    const mount = c.volumeMounts?.find((m) => m.name === 'rules');
    const runtimeRoot = env.get('RUNTIME_ROOT') ?? '';
    expect(mount?.mountPath).toBe(
      path.posix.join(
        runtimeRoot,
        env.get('RUNTIME_SUBDIRECTORY') ?? '',
        env.get('RUNTIME_APPDIRECTORY') ?? '',
      ),
    );
    const configMap = objects.find((o) => o.kind === 'ConfigMap');
    const files = (configMap?.data ?? {}) as Record<string, string>;
    const mounted = path.join(dir, mount?.mountPath ?? '');
    mkdirSync(mounted, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(mounted, name), text);

    // What is moved to this machine: listeners to loopback ports of its choosing, the mount
    // under a temporary directory, the Redis address to a real server; the rest as rendered.
    expect(env.get('BACKEND_TYPE')).toBe('redis');
    redis = await RedisServer.start();
    const moved: Record<string, string> = {
      ...LOOPBACK_LISTENERS,
      PROMETHEUS_ADDR: '127.0.0.1:0',
      RUNTIME_ROOT: path.join(dir, runtimeRoot),
      REDIS_URL: `127.0.0.1:${redis.port}`,
      // The ports are read from the "listening" line, logged at info.
      LOG_LEVEL: 'info',
    };
    for (const name of Object.keys(moved)) expect([name, env.has(name)]).toEqual([name, true]);
    const rendered = Object.fromEntries(
      [...env].flatMap(([name, value]) => (value === undefined ? [] : [[name, value]])),
    );
    service = await ServiceProcess.start({
      env: { ...rendered, ...moved },
      waitFor: 'listening',
    });

    // The readiness probe, on the port it names.
    const probe = c.readinessProbe?.httpGet;
    expect(probe).toBeDefined();
    const probePort = typeof probe?.port === 'number' ? probe.port : portOf(c, String(probe?.port));
    expect(String(probePort)).toBe(env.get('PORT'));
    const ready = service;
    const status = await eventually(
      async () => {
        const res = await fetch(ready.url(probe?.path ?? ''));
        return res.status === 200 ? 200 : false;
      },
      { what: `${probe?.path ?? ''} to answer 200`, timeoutMs: 5_000 },
    ).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
    expect(status).toBe(200);

    // Ready with no rules means every domain is unknown: an answer, OK, for any request.
    const decision = await ready.json({
      domain: 'any',
      descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
    });
    expect([decision.status, decision.body.overallCode]).toEqual([200, 'OK']);
  });

  test('with rules, readiness still waits for a configuration with a domain', () => {
    const values = (name: string, text: string): string => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    };
    const rules = values(
      'rules.yaml',
      'rules:\n  files:\n    edge.yaml: |\n      domain: edge\n      descriptors:\n' +
        '        - key: k\n          rate_limit: { unit: minute, requests_per_unit: 1 }\n',
    );
    const healthy = (...args: string[]): string | undefined =>
      envOf(ratelimitContainer(render(...args))).get('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED');
    expect(healthy('-f', rules)).toBe('true');
    expect(healthy('--set', 'rules.existingConfigMap=my-rules')).toBe('true');
    expect(healthy('--set', 'config.type=xds', '--set', 'xds.serverUrl=xds:18000')).toBe('true');
    // Turned off, it stays off.
    expect(healthy('-f', rules, '--set', 'config.healthyWithAtLeastOneConfigLoaded=false')).toBe(
      'false',
    );
  });
});
