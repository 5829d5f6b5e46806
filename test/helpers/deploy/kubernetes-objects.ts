// Rendered Kubernetes manifests: parsed, validated against the Kubernetes schemas, and looked into.
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';

/** A parsed manifest: only the fields every object has are typed; the rest is read by path. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

interface Validatable {
  validate(): void;
}

/** Every kind the deploy manifests may contain, with kubernetes-models' validator for it. */
const MODELS: Readonly<Record<string, (data: never) => Validatable>> = {
  'apps/v1/Deployment': (d) => new Deployment(d),
  'autoscaling/v2/HorizontalPodAutoscaler': (d) => new HorizontalPodAutoscaler(d),
  'networking.k8s.io/v1/NetworkPolicy': (d) => new NetworkPolicy(d),
  'policy/v1/PodDisruptionBudget': (d) => new PodDisruptionBudget(d),
  'v1/ConfigMap': (d) => new ConfigMap(d),
  'v1/Secret': (d) => new Secret(d),
  'v1/Service': (d) => new Service(d),
  'v1/ServiceAccount': (d) => new ServiceAccount(d),
  'monitoring.coreos.com/v1/ServiceMonitor': (d) => new ServiceMonitor(d),
  'monitoring.coreos.com/v1/PrometheusRule': (d) => new PrometheusRule(d),
};

/** Parses a multi-document YAML stream, dropping empty documents; throws on YAML errors. */
export function parseManifests(text: string, source: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0]?.message ?? ''}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    const obj = value as KubeObject;
    if (typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string')
      throw new Error(`${source}: a document without kind or apiVersion`);
    out.push(obj);
  }
  return out;
}

/**
 * Validates each object with the model of its apiVersion and kind. Returns one message per
 * invalid object (an unknown kind is a failure too, never skipped).
 */
export function validateManifests(objects: readonly KubeObject[]): string[] {
  const problems: string[] = [];
  for (const obj of objects) {
    const key = `${obj.apiVersion}/${obj.kind}`;
    const where = `${obj.kind}/${obj.metadata.name}`;
    const model = MODELS[key];
    if (model === undefined) {
      problems.push(`${where}: no validator for ${key}`);
      continue;
    }
    try {
      model(obj as never).validate();
    } catch (err: unknown) {
      problems.push(`${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/** The one object of a kind and name; throws naming what is there instead. */
export function findObject(
  objects: readonly KubeObject[],
  kind: string,
  name?: string,
): KubeObject {
  const found = objects.filter(
    (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
  );
  if (found.length !== 1) {
    const have = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(
      `expected one ${kind}${name === undefined ? '' : `/${name}`}, found ${found.length} among ${have}`,
    );
  }
  return found[0]!;
}

/** The parts of a container the tests look at. */
export interface Container {
  readonly name: string;
  readonly image: string;
  readonly ports?: { name?: string; containerPort: number }[];
  readonly env?: { name: string; value?: string; valueFrom?: Record<string, unknown> }[];
  readonly volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  readonly readinessProbe?: Probe;
  readonly livenessProbe?: Probe;
  readonly startupProbe?: Probe;
  readonly resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readonly securityContext?: Record<string, unknown>;
  readonly command?: string[];
  readonly args?: string[];
}

export interface Probe {
  readonly httpGet?: { path: string; port: number | string };
  readonly tcpSocket?: { port: number | string };
  readonly exec?: { command: string[] };
}

export interface PodSpec {
  readonly containers: Container[];
  readonly volumes?: {
    name: string;
    configMap?: { name: string };
    secret?: { secretName: string };
  }[];
  readonly securityContext?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

/** The pod template of a Deployment. */
export function podSpec(deployment: KubeObject): PodSpec {
  const spec = deployment.spec as { template: { spec: PodSpec } };
  return spec.template.spec;
}

/** A container of a Deployment by name. */
export function container(deployment: KubeObject, name: string): Container {
  const found = podSpec(deployment).containers.find((c) => c.name === name);
  if (found === undefined) throw new Error(`${deployment.metadata.name} has no container ${name}`);
  return found;
}

/** A container's plain env values by name (valueFrom entries map to undefined). */
export function envOf(c: Container): Map<string, string | undefined> {
  return new Map((c.env ?? []).map((e) => [e.name, e.value]));
}

/** A named container port's number. */
export function portOf(c: Container, name: string): number | undefined {
  return c.ports?.find((p) => p.name === name)?.containerPort;
}
