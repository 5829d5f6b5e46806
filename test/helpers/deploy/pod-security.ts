// The Kubernetes "restricted" Pod Security Standard, as the admission controller checks it, for
// the pods of rendered manifests: what each pod template breaks, named.
import { podSpec, type KubeObject, type PodSpec } from './kubernetes-objects';

/** Volume types the restricted level allows. */
const VOLUME_TYPES = new Set([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

type Context = Readonly<Record<string, unknown>> | undefined;

interface AnyContainer {
  readonly name: string;
  readonly securityContext?: Record<string, unknown>;
}

function seccompType(context: Context): unknown {
  return (context?.seccompProfile as { type?: unknown } | undefined)?.type;
}

/** What one container breaks, given its pod's security context. */
function containerProblems(c: AnyContainer, pod: Context): string[] {
  const sc = c.securityContext;
  const out: string[] = [];
  const capabilities = sc?.capabilities as { add?: string[]; drop?: string[] } | undefined;
  if (sc?.privileged === true) out.push('privileged');
  if (sc?.allowPrivilegeEscalation !== false) out.push('allowPrivilegeEscalation is not false');
  if (!(capabilities?.drop ?? []).includes('ALL')) out.push('capabilities do not drop ALL');
  const added = (capabilities?.add ?? []).filter((cap) => cap !== 'NET_BIND_SERVICE');
  if (added.length > 0) out.push(`capabilities add ${added.join(', ')}`);
  const nonRoot = sc?.runAsNonRoot ?? pod?.runAsNonRoot;
  if (nonRoot !== true) out.push('runAsNonRoot is not true');
  if ((sc?.runAsUser ?? pod?.runAsUser) === 0) out.push('runAsUser is 0');
  const seccomp = seccompType(sc) ?? seccompType(pod);
  if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
    out.push('seccompProfile is not RuntimeDefault (or Localhost)');
  return out.map((p) => `container ${c.name}: ${p}`);
}

function podProblems(spec: PodSpec): string[] {
  const out: string[] = [];
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC'])
    if (spec[host] === true) out.push(`${host} is true`);
  for (const volume of spec.volumes ?? []) {
    const type = Object.keys(volume).find((k) => k !== 'name');
    if (type === undefined || !VOLUME_TYPES.has(type))
      out.push(`volume ${volume.name}: type ${String(type)} is not allowed`);
  }
  const initContainers = (spec.initContainers ?? []) as AnyContainer[];
  for (const c of [...spec.containers, ...initContainers])
    out.push(...containerProblems(c, spec.securityContext));
  return out;
}

/** Every violation of the restricted level by the Deployments among `objects`, named. */
export function restrictedProblems(objects: readonly KubeObject[]): string[] {
  return objects
    .filter((o) => o.kind === 'Deployment')
    .flatMap((d) => podProblems(podSpec(d)).map((p) => `Deployment/${d.metadata.name}: ${p}`));
}
