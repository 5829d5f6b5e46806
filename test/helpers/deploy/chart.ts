// The Helm chart read as files: values merged as Helm merges them, the schema, and what the
// templates reference. Used where no helm binary can render the chart.
import Ajv, { type ValidateFunction } from 'ajv';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..', '..');
export const CHART_DIR = path.join(ROOT, 'deploy', 'helm', 'ratelimit');
export const TEMPLATES_DIR = path.join(CHART_DIR, 'templates');
/** The example values files, each a documented way to install (and helm's lint matrix). */
export const CI_VALUES_DIR = path.join(CHART_DIR, 'ci');

/** The parts of package.json the deploy files must agree with. */
export const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  readonly version: string;
  readonly bin: Readonly<Record<string, string>>;
};

export type Values = Record<string, unknown>;

function isMap(v: unknown): v is Values {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function readYamlFile(file: string): Values {
  const value: unknown = parse(readFileSync(file, 'utf8'));
  if (!isMap(value)) throw new Error(`${file}: not a YAML map`);
  return value;
}

/** Helm's coalescing: maps merge key by key, anything else replaces, null deletes. */
export function mergeValues(base: Values, override: Values): Values {
  const out: Values = {};
  for (const [key, value] of Object.entries(base)) if (!(key in override)) out[key] = value;
  for (const [key, value] of Object.entries(override)) {
    const current = base[key];
    if (value === null) continue;
    out[key] = isMap(value) && isMap(current) ? mergeValues(current, value) : value;
  }
  return out;
}

/** values.yaml with each file laid over it in order, as `helm -f a -f b` does. */
export function valuesWith(...files: string[]): Values {
  let values = readYamlFile(path.join(CHART_DIR, 'values.yaml'));
  for (const file of files) values = mergeValues(values, readYamlFile(file));
  return values;
}

export function ciValuesFiles(): string[] {
  return readdirSync(CI_VALUES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => path.join(CI_VALUES_DIR, f));
}

let compiled: ValidateFunction | undefined;

/** values.schema.json compiled with ajv in strict mode (an unknown keyword is an error), once. */
export function compileValuesSchema(): ValidateFunction {
  if (compiled === undefined) {
    const text = readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8');
    const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false });
    compiled = ajv.compile(JSON.parse(text) as object);
  }
  return compiled;
}

/** ajv's errors as `path: message` lines. */
export function schemaErrors(validate: ValidateFunction): string[] {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? ''}`);
}

export interface TemplateFile {
  readonly name: string;
  readonly text: string;
}

export function templateFiles(): TemplateFile[] {
  return readdirSync(TEMPLATES_DIR)
    .sort()
    .map((name) => ({ name, text: readFileSync(path.join(TEMPLATES_DIR, name), 'utf8') }));
}

/** The template actions of a file, `{{ ... }}` without trim markers and comments. */
export function actions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\{\{-?\s*([\s\S]*?)\s*-?\}\}/g)) {
    const body = m[1] ?? '';
    if (!body.startsWith('/*')) out.push(body);
  }
  return out;
}

/** Every `.Values.a.b` path the templates read, with the file it is in. */
export function valuePaths(files: readonly TemplateFile[]): { file: string; path: string[] }[] {
  const out: { file: string; path: string[] }[] = [];
  for (const f of files)
    for (const m of f.text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g))
      out.push({ file: f.name, path: (m[1] ?? '').slice(1).split('.') });
  return out;
}

/** Whether a path of keys exists in the values (a leaf may be any value, including {} or ""). */
export function hasPath(values: Values, keys: readonly string[]): boolean {
  let node: unknown = values;
  for (const key of keys) {
    if (!isMap(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

/**
 * Problems of block structure: every if/range/with/define ends once, every else is inside
 * one, and every template included is defined. Helm would refuse such a chart at parse time.
 */
export function blockProblems(files: readonly TemplateFile[]): string[] {
  const problems: string[] = [];
  const defined = new Set<string>();
  const included: { file: string; name: string }[] = [];
  for (const f of files) {
    const stack: string[] = [];
    for (const action of actions(f.text)) {
      const word = /^([a-z]+)\b/.exec(action)?.[1];
      if (
        word === 'if' ||
        word === 'range' ||
        word === 'with' ||
        word === 'define' ||
        word === 'block'
      )
        stack.push(word);
      else if (word === 'else' && !['if', 'range', 'with'].includes(stack[stack.length - 1] ?? ''))
        problems.push(`${f.name}: else outside if/range/with`);
      else if (word === 'end' && stack.pop() === undefined)
        problems.push(`${f.name}: end without a block`);
      const def = /^define "([^"]+)"/.exec(action);
      if (def?.[1] !== undefined) defined.add(def[1]);
      for (const inc of action.matchAll(/\binclude "([^"]+)"/g))
        included.push({ file: f.name, name: inc[1] ?? '' });
    }
    if (stack.length > 0) problems.push(`${f.name}: ${stack.join(', ')} not ended`);
  }
  for (const inc of included)
    if (!defined.has(inc.name))
      problems.push(`${inc.file}: includes "${inc.name}", which no template defines`);
  return problems;
}

/**
 * The env names the templates write (all in _env*.tpl). `{{ $p }}NAME` in the Redis instance template is
 * expanded with every prefix it is called with; `{{ $name }}` (the settings map) is dynamic
 * and returned apart.
 */
export function templateEnvNames(files: readonly TemplateFile[]): {
  names: Set<string>;
  dynamic: string[];
} {
  const all = files
    .filter((f) => f.name.startsWith('_env'))
    .map((f) => f.text)
    .join('\n');
  const prefixes = [...all.matchAll(/dict "prefix" "([A-Z_]+)"/g)].map((m) => m[1] ?? '');
  const names = new Set<string>();
  const dynamic: string[] = [];
  for (const m of all.matchAll(/^\s*- name: (\S.*)$/gm)) {
    const token = (m[1] ?? '').trim();
    if (/^[A-Z][A-Z0-9_]*$/.test(token)) names.add(token);
    else if (token.startsWith('{{ $p }}'))
      for (const p of prefixes) names.add(p + token.slice('{{ $p }}'.length));
    else if (token.includes('{{')) dynamic.push(token);
  }
  return { names, dynamic };
}
