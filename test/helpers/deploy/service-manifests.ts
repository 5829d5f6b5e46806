// What every rendered install of the service must hold, whichever tool rendered it (Helm or Kustomize).
import path from 'node:path';
import {
  container,
  envOf,
  findObject,
  podSpec,
  portOf,
  validateManifests,
  type Container,
  type KubeObject,
  type PodSpec,
  type Probe,
} from './kubernetes-objects';
import { unreadNames } from './settings-names';

/** Settings whose values are paths to files the pod must have mounted. */
const FILE_SETTING = /(_FILE|_CERT|_KEY|_CACERT)$/;

export interface InstallExpectations {
  /** Whether the rules ConfigMap is among the objects (false: an existing one is named). */
  readonly hasRulesConfigMap?: boolean;
  /** Whether the Service publishes the debug port (the chart's service.publishDebugPort). */
  readonly publishesDebugPort?: boolean;
  /** The Deployment of the service. */
  readonly deployment: string;
  /** The Service in front of it. */
  readonly service: string;
  /** The image the container runs, `repository:tag`. */
  readonly image: string;
}

/**
 * A probe on the HTTP listener's `path`: readiness asks /healthcheck (health, which a missing
 * configuration or an unreachable backend fails), liveness and start-up ask /livez (the process
 * answers), so a backend outage makes pods unready and never restarts them.
 */
function expectHttpProbe(
  probe: Probe | undefined,
  httpPort: number,
  what: string,
  path: '/healthcheck' | '/livez',
): void {
  if (probe === undefined) throw new Error(`${what} is missing`);
  expect([what, probe.httpGet?.path]).toEqual([what, path]);
  const port = probe.httpGet?.port;
  expect([what, port === 'http' || port === httpPort]).toEqual([what, true]);
}

/** The rule files' mount where RUNTIME_* point; returns the ConfigMap it comes from. */
function expectRulesMount(c: Container, volumes: PodSpec['volumes']): string {
  const env = envOf(c);
  const dir = path.posix.join(
    env.get('RUNTIME_ROOT') ?? '',
    env.get('RUNTIME_SUBDIRECTORY') ?? '',
    env.get('RUNTIME_APPDIRECTORY') ?? '',
  );
  const mount = c.volumeMounts?.find((m) => m.mountPath === dir);
  if (mount === undefined) throw new Error(`no volume is mounted at the rules directory ${dir}`);
  expect(mount.readOnly).toBe(true);
  const configMap = volumes?.find((v) => v.name === mount.name)?.configMap?.name;
  if (configMap === undefined) throw new Error(`the rules volume ${mount.name} is not a ConfigMap`);
  // The kubelet's symlink swap happens inside the mounted directory, next to its dot-directories.
  expect(env.get('RUNTIME_WATCH_ROOT')).toBe('false');
  expect(env.get('RUNTIME_IGNOREDOTFILES')).toBe('true');
  return configMap;
}

/**
 * Checks one install: every object valid for Kubernetes; the container's ports, probes, env
 * (all settings the service reads) and mounts (every file setting under a mounted path); the
 * Service reaching the named ports. Returns the service's container for further checks.
 */
export function expectServiceInstall(
  objects: readonly KubeObject[],
  expected: InstallExpectations,
): Container {
  expect(validateManifests(objects)).toEqual([]);
  const deployment = findObject(objects, 'Deployment', expected.deployment);
  const spec = podSpec(deployment);
  const c = container(deployment, 'ratelimit');
  expect(c.image).toBe(expected.image);
  const env = envOf(c);
  expect(unreadNames(env.keys())).toEqual([]);

  const httpPort = Number(env.get('PORT') ?? 8080);
  expect(portOf(c, 'http')).toBe(httpPort);
  expect(portOf(c, 'grpc')).toBe(Number(env.get('GRPC_PORT') ?? 8081));
  expect(portOf(c, 'debug')).toBe(Number(env.get('DEBUG_PORT') ?? 6070));
  if (env.get('USE_PROMETHEUS') === 'true')
    expect(portOf(c, 'metrics')).toBe(
      Number((env.get('PROMETHEUS_ADDR') ?? ':9090').split(':').pop()),
    );
  expectHttpProbe(c.readinessProbe, httpPort, 'readinessProbe', '/healthcheck');
  expectHttpProbe(c.livenessProbe, httpPort, 'livenessProbe', '/livez');
  if (c.startupProbe !== undefined)
    expectHttpProbe(c.startupProbe, httpPort, 'startupProbe', '/livez');
  // The image's user and filesystem: non-root, nothing written.
  expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
  expect(spec.securityContext?.runAsNonRoot).toBe(true);

  const rulesConfigMap =
    (env.get('CONFIG_TYPE') ?? 'FILE') === 'FILE' ? expectRulesMount(c, spec.volumes) : undefined;
  for (const [name, value] of env) {
    if (!FILE_SETTING.test(name) || value === undefined) continue;
    const under = c.volumeMounts?.some((m) => value.startsWith(`${m.mountPath}/`));
    expect([name, value, under]).toEqual([name, value, true]);
  }

  const rulesData =
    rulesConfigMap !== undefined && expected.hasRulesConfigMap !== false
      ? ((findObject(objects, 'ConfigMap', rulesConfigMap).data ?? {}) as Record<string, string>)
      : undefined;

  // A pod whose every rule was refused must not be ready; with no rules to wait for (file
  // mode, an empty ConfigMap of its own) it must be, or a default install never is.
  const hasRules = rulesData === undefined || Object.keys(rulesData).length > 0;
  expect([
    'HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED',
    env.get('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED'),
  ]).toEqual(['HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', String(hasRules)]);

  const service = findObject(objects, 'Service', expected.service);
  const serviceSpec = service.spec as {
    selector: Record<string, string>;
    ports: { name: string; targetPort: string | number }[];
  };
  const podLabels = (
    deployment.spec as { template: { metadata: { labels: Record<string, string> } } }
  ).template.metadata.labels;
  for (const [k, v] of Object.entries(serviceSpec.selector))
    expect([k, podLabels[k]]).toEqual([k, v]);
  for (const port of serviceSpec.ports)
    expect([port.name, portOf(c, String(port.targetPort))]).toEqual([
      port.name,
      expect.any(Number),
    ]);
  expect(serviceSpec.ports.map((p) => p.name)).toEqual(expect.arrayContaining(['http', 'grpc']));
  // The debug port (rules, counters, recent decisions with client addresses) is published only
  // when asked for.
  if (expected.publishesDebugPort !== true)
    expect(serviceSpec.ports.map((p) => p.name)).not.toContain('debug');
  return c;
}
