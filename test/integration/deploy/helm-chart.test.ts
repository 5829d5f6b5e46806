// deploy/helm/ratelimit: helm lint and helm template where a helm binary exists; the structural
// checks (schema, values paths, template blocks, setting names, rule files) always.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import {
  blockProblems,
  CHART_DIR,
  ciValuesFiles,
  compileValuesSchema,
  hasPath,
  readYamlFile,
  PACKAGE,
  ROOT,
  schemaErrors,
  templateEnvNames,
  templateFiles,
  valuePaths,
  valuesWith,
  type Values,
} from '../../helpers/deploy/chart';
import { configCheckFiles } from '../../helpers/deploy/config-check';
import {
  container,
  envOf,
  findObject,
  parseManifests,
} from '../../helpers/deploy/kubernetes-objects';
import { expectServiceInstall } from '../../helpers/deploy/service-manifests';
import { restrictedProblems } from '../../helpers/deploy/pod-security';
import { runProgram } from '../../helpers/programs';
import { unreadNames } from '../../helpers/deploy/settings-names';

const BAD_VALUES_DIR = path.join(ROOT, 'test', 'fixtures', 'helm');
const BAD_VALUES = readdirSync(BAD_VALUES_DIR).sort();
const VERSION = PACKAGE.version;
/** values.yaml alone, then each example values file over it. */
const MATRIX: { name: string; files: string[] }[] = [
  { name: 'values.yaml', files: [] },
  ...ciValuesFiles().map((f) => ({ name: `ci/${path.basename(f)}`, files: [f] })),
];

const ran = new Set<string>();

/** Runs helm; a machine without it fails these tests naming helm (scripts/get-helm.sh gets it). */
function helm(args: string[]): { status: number | null; output: string; stdout: string } {
  const run = runProgram('helm', args, { timeout: 60_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}`, stdout: run.stdout };
}

function get(values: Values, keys: string): unknown {
  return keys
    .split('.')
    .reduce<unknown>((node, key) => (node as Values | undefined)?.[key], values);
}

describe('Helm chart (deploy/helm/ratelimit)', () => {
  afterAll(() => {
    console.log(`Helm chart checks run: ${[...ran].join('; ')}.`);
  });

  test('values.yaml and every example values file validate against values.schema.json', () => {
    const validate = compileValuesSchema();
    for (const { name, files } of MATRIX) {
      const ok = validate(valuesWith(...files));
      expect([name, schemaErrors(validate)]).toEqual([name, []]);
      expect(ok).toBe(true);
    }
    ran.add(`schema (ajv): ${MATRIX.length} values files valid`);
  });

  test.each(BAD_VALUES)('the schema refuses %s', (file) => {
    const fixture = path.join(BAD_VALUES_DIR, file);
    const refusedAt = /^# refused at: (\S+)/.exec(readFileSync(fixture, 'utf8'))?.[1];
    if (refusedAt === undefined) throw new Error(`${file} does not say where it is refused`);
    const validate = compileValuesSchema();
    expect(validate(valuesWith(fixture))).toBe(false);
    expect(schemaErrors(validate).map((e) => e.slice(0, e.indexOf(': ')))).toContain(refusedAt);
    ran.add(`schema refusals: ${BAD_VALUES.length} bad values files`);
  });

  test('every .Values path the templates read exists in values.yaml', () => {
    const values = readYamlFile(path.join(CHART_DIR, 'values.yaml'));
    const paths = valuePaths(templateFiles());
    expect(paths.length).toBeGreaterThan(50);
    const missing = paths
      .filter((p) => !hasPath(values, p.path))
      .map((p) => `${p.file}: .Values.${p.path.join('.')}`);
    expect(missing).toEqual([]);
    // The check itself sees a path that is not there.
    expect(hasPath(values, ['redis', 'sentinel', 'masterNmae'])).toBe(false);
    ran.add(`${paths.length} .Values paths exist`);
  });

  test('template blocks are balanced and every included template is defined', () => {
    expect(blockProblems(templateFiles())).toEqual([]);
    expect(
      blockProblems([
        { name: 'x.yaml', text: '{{- if .a }}{{ include "nope" . }}{{- else }}{{ end }}{{ end }}' },
      ]),
    ).toEqual([
      'x.yaml: end without a block',
      'x.yaml: includes "nope", which no template defines',
    ]);
    ran.add('template blocks and includes');
  });

  test('every setting the templates write is a setting the service reads', () => {
    const files = templateFiles();
    const { names, dynamic } = templateEnvNames(files);
    expect(names.size).toBeGreaterThan(60);
    expect(unreadNames(names)).toEqual([]);
    // The one name written from values is the settings map, checked per values file below.
    expect(dynamic).toEqual(['{{ $name }}']);
    // Env is written in _env.tpl only, so nothing escapes the check.
    for (const f of files.filter((t) => !t.name.startsWith('_env')))
      expect([f.name, /^\s*- name: [A-Z]/m.test(f.text)]).toEqual([f.name, false]);

    // The schema keeps those names out of `settings`, so no env name is written twice.
    const schema = JSON.parse(readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8')) as {
      properties: { settings: { propertyNames: { not: { enum: string[] } } } };
    };
    expect([...schema.properties.settings.propertyNames.not.enum].sort()).toEqual(
      [...names].sort(),
    );
    ran.add(`${names.size} setting names read by the service`);
  });

  test.each(MATRIX.slice(1).map((m) => m.name))(
    '%s: its settings are read and its rule files load',
    (name) => {
      const values = valuesWith(path.join(CHART_DIR, name));
      expect(unreadNames(Object.keys(get(values, 'settings') as Values))).toEqual([]);
      const files = get(values, 'rules.files') as Record<string, unknown>;
      if (Object.keys(files).length > 0) {
        const texts = Object.fromEntries(
          Object.entries(files).map(([file, content]) => [
            file,
            typeof content === 'string' ? content : stringify(content),
          ]),
        );
        const check = configCheckFiles(texts);
        expect([check.status, check.output]).toEqual([0, expect.any(String)]);
      }
      ran.add('example settings and rule files (ratelimit-config-check)');
    },
  );

  test('Chart.yaml: appVersion is the package version, the default image tag', () => {
    const chart = readYamlFile(path.join(CHART_DIR, 'Chart.yaml'));
    expect(chart.appVersion).toBe(VERSION);
    expect(chart.apiVersion).toBe('v2');
    ran.add('Chart.yaml');
  });

  test('helm lint --strict passes for every values file', () => {
    for (const { name, files } of MATRIX) {
      const run = helm(['lint', '--strict', CHART_DIR, ...files.flatMap((f) => ['-f', f])]);
      expect([name, run.status, run.output]).toEqual([name, 0, expect.any(String)]);
    }
    ran.add('helm lint');
  });

  test('helm lint refuses every bad values file', () => {
    for (const file of BAD_VALUES) {
      const run = helm(['lint', CHART_DIR, '-f', path.join(BAD_VALUES_DIR, file)]);
      expect([file, run.status]).toEqual([file, 1]);
    }
    ran.add('helm lint refusals');
  });

  test('helm template renders valid Kubernetes objects for every values file', () => {
    for (const { name, files } of MATRIX) {
      const run = helm([
        'template',
        'rl',
        CHART_DIR,
        '--namespace',
        'edge',
        ...files.flatMap((f) => ['-f', f]),
      ]);
      expect([name, run.status, run.output]).toEqual([name, 0, expect.any(String)]);
      const objects = parseManifests(run.stdout, name);
      const values = valuesWith(...files);
      const c = expectServiceInstall(objects, {
        deployment: 'rl-ratelimit',
        service: 'rl-ratelimit',
        image: `ratelimit-ts:${VERSION}`,
        hasRulesConfigMap: get(values, 'rules.existingConfigMap') === '',
        publishesDebugPort: get(values, 'service.publishDebugPort') === true,
      });
      expect([name, restrictedProblems(objects)]).toEqual([name, []]);
      const env = envOf(c);
      expect(env.get('WORKERS')).toBe(String(get(values, 'workers')));
      if (get(values, 'resources.requests.cpu') === undefined)
        expect(c.resources?.requests?.cpu).toBe(
          `${Number(get(values, 'workers')) * Number(get(values, 'cpuPerWorkerMillicores'))}m`,
        );
      expect(env.get('BACKEND_TYPE')).toBe(get(values, 'backend.type'));
      if (get(values, 'autoscaling.enabled') === true)
        findObject(objects, 'HorizontalPodAutoscaler', 'rl-ratelimit');
      if (get(values, 'networkPolicy.enabled') === true)
        findObject(objects, 'NetworkPolicy', 'rl-ratelimit');
      expect(container(findObject(objects, 'Deployment', 'rl-ratelimit'), 'ratelimit').name).toBe(
        'ratelimit',
      );
    }
    ran.add('helm template output validated');
  });
});
