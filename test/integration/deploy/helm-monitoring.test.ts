// What the chart exposes and installs for operators: the debug port (rules, counters and recent
// decisions, with client addresses and user ids) only when published, the dashboard and alert
// rules of deploy/monitoring when asked for, and a start in xDS mode that does not wait on the
// management server. Rendered with helm (scripts/get-helm.sh fetches it).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, ROOT } from '../../helpers/deploy/chart';
import {
  container,
  envOf,
  findObject,
  parseManifests,
  validateManifests,
  type KubeObject,
} from '../../helpers/deploy/kubernetes-objects';
import { runProgram } from '../../helpers/programs';

const MONITORING = path.join(ROOT, 'deploy', 'monitoring');

function render(...args: string[]): KubeObject[] {
  const run = runProgram('helm', ['template', 'rl', CHART_DIR, ...args], { timeout: 60_000 });
  expect([run.status, run.stderr]).toEqual([0, expect.any(String)]);
  return parseManifests(run.stdout, `helm template ${args.join(' ')}`);
}

function servicePorts(objects: readonly KubeObject[]): string[] {
  const spec = findObject(objects, 'Service', 'rl-ratelimit').spec as { ports: { name: string }[] };
  return spec.ports.map((p) => p.name);
}

describe('the Helm chart for operators', () => {
  test('the debug port is off the Service by default, and published when asked', () => {
    const defaults = render();
    expect(servicePorts(defaults)).toEqual(['http', 'grpc', 'metrics']);
    // The pods keep it, for kubectl port-forward.
    const c = container(findObject(defaults, 'Deployment', 'rl-ratelimit'), 'ratelimit');
    expect(c.ports?.map((p) => p.name)).toContain('debug');
    expect(servicePorts(render('--set', 'service.publishDebugPort=true'))).toEqual([
      'http',
      'grpc',
      'debug',
      'metrics',
    ]);
  });

  test('no PrometheusRule or dashboard by default', () => {
    const kinds = render().map((o) => `${o.kind}/${o.metadata.name}`);
    expect(kinds).not.toContain('PrometheusRule/rl-ratelimit');
    expect(kinds).not.toContain('ConfigMap/rl-ratelimit-dashboard');
  });

  test('the PrometheusRule carries the alert rules of deploy/monitoring', () => {
    const objects = render(
      '--set',
      'monitoring.prometheusRule.enabled=true',
      '--set',
      'monitoring.prometheusRule.labels.release=prometheus',
    );
    const rule = findObject(objects, 'PrometheusRule', 'rl-ratelimit');
    expect(validateManifests([rule])).toEqual([]);
    expect((rule.metadata.labels as Record<string, string> | undefined)?.release).toBe(
      'prometheus',
    );
    expect(rule.spec).toEqual(
      parse(readFileSync(path.join(MONITORING, 'ratelimit-alerts.yaml'), 'utf8')),
    );
  });

  test("the dashboard ConfigMap carries the Grafana sidecar's label and the dashboard", () => {
    const objects = render('--set', 'monitoring.grafanaDashboard.enabled=true');
    const map = findObject(objects, 'ConfigMap', 'rl-ratelimit-dashboard');
    expect(validateManifests([map])).toEqual([]);
    expect((map.metadata.labels as Record<string, string> | undefined)?.grafana_dashboard).toBe(
      '1',
    );
    const data = (map as unknown as { data: Record<string, string> }).data;
    expect(JSON.parse(data['ratelimit-ts.json'] ?? '')).toEqual(
      JSON.parse(readFileSync(path.join(MONITORING, 'ratelimit-dashboard.json'), 'utf8')),
    );
  });

  test('in xDS mode a pod starts without its first configuration, unready until it arrives', () => {
    const xds = envOf(
      container(
        findObject(
          render('-f', path.join(CHART_DIR, 'ci', 'xds-values.yaml')),
          'Deployment',
          'rl-ratelimit',
        ),
        'ratelimit',
      ),
    );
    expect(xds.get('FORCE_START_WITHOUT_INITIAL_CONFIG')).toBe('true');
    expect(xds.get('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED')).toBe('true');
    const file = envOf(container(findObject(render(), 'Deployment', 'rl-ratelimit'), 'ratelimit'));
    expect(file.get('FORCE_START_WITHOUT_INITIAL_CONFIG')).toBe('false');
  });
});
