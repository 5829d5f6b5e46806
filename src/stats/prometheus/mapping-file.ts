// Reading statsd_exporter's mapping file: the YAML, its defaults, then each mapping checked.
import { parse as parseYaml } from 'yaml';
import { GoRegExp } from '../../lib/go-regexp';
import { indexedTemplate } from '../../lib/go-template';

export type StatsdType = 'counter' | 'gauge' | 'observer';
export type ObserverType = 'histogram' | 'summary';

/** What one mapping says about the metrics it matches. */
export interface MappingRule {
  readonly match: string;
  readonly matchType: 'glob' | 'regex';
  readonly name: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly action: 'map' | 'drop';
  readonly matchMetricType: StatsdType | undefined;
  readonly observerType: ObserverType;
  readonly help: string | undefined;
  readonly scale: number | undefined;
  readonly buckets: readonly number[];
  readonly quantiles: readonly number[];
  /**
   * The match: a glob as a JavaScript RegExp built here, a regex rule with Go's semantics. Its
   * name and label templates refer to groups as `${N}` only (named references resolved).
   */
  readonly regex: NameMatcher;
}

/** What a rule matches names with: the whole match then each group, or null. */
export interface NameMatcher {
  exec(name: string): readonly (string | undefined)[] | null;
}

/** A mapping file that cannot be used: the file and what is wrong. */
export class MapperError extends Error {
  constructor(source: string, reason: string) {
    super(`${source}: ${reason}`);
    this.name = 'MapperError';
  }
}

/** Prometheus's default histogram buckets, in seconds. */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DEFAULT_QUANTILES = [0.5, 0.9, 0.99];
const TEMPLATE = String.raw`(\$\{?\d+\}?)`;
const METRIC_LINE = new RegExp(
  String.raw`^(\*|[a-zA-Z_][a-zA-Z0-9_\-]*)(\.\*|\.[a-zA-Z0-9_][a-zA-Z0-9_\-]*)*$`,
);
const METRIC_NAME = new RegExp(`^([a-zA-Z_]|${TEMPLATE})([a-zA-Z0-9_]|${TEMPLATE})*$`);
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]+$/;

const MAPPING_KEYS = new Set([
  'match',
  'name',
  'labels',
  'help',
  'action',
  'match_type',
  'match_metric_type',
  'observer_type',
  'timer_type',
  'scale',
  'histogram_options',
  'summary_options',
  'honor_labels',
]);
const DEFAULTS_KEYS = new Set([
  'observer_type',
  'timer_type',
  'match_type',
  'glob_disable_ordering',
  'histogram_options',
  'summary_options',
]);

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What every mapping inherits unless it says otherwise. */
interface Defaults {
  readonly observerType: ObserverType;
  readonly matchType: 'glob' | 'regex';
  readonly buckets: readonly number[];
  readonly quantiles: readonly number[];
}

/** Reads one file's problems as MapperErrors naming the file. */
class FileReader {
  constructor(readonly source: string) {}

  fail(reason: string): never {
    throw new MapperError(this.source, reason);
  }

  onlyKeys(value: Obj, allowed: ReadonlySet<string>, where: string): void {
    for (const key of Object.keys(value))
      if (!allowed.has(key)) this.fail(`${where}: unknown key '${key}'`);
  }

  numbers(value: unknown, what: string): number[] {
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'number'))
      this.fail(`${what} must be a list of numbers`);
    return value as number[];
  }

  observerType(value: unknown): ObserverType | undefined {
    if (value === undefined || value === '' || value === null) return undefined;
    if (value === 'histogram' || value === 'summary') return value;
    this.fail(`unknown observer_type ${JSON.stringify(value)}; accepted: histogram, summary`);
  }

  buckets(options: unknown): number[] | undefined {
    if (options === undefined) return undefined;
    if (!isObj(options)) this.fail('histogram_options must be a map');
    return options.buckets === undefined
      ? undefined
      : this.numbers(options.buckets, 'histogram_options.buckets');
  }

  quantiles(options: unknown): number[] | undefined {
    if (!isObj(options) || !Array.isArray(options.quantiles)) return undefined;
    return options.quantiles.map((q: unknown) => {
      if (!isObj(q) || typeof q.quantile !== 'number')
        this.fail('summary_options.quantiles must be a list of {quantile, error}');
      return q.quantile;
    });
  }
}

function parseDocument(text: string, file: FileReader): Obj {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err: unknown) {
    const first = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    file.fail(`the YAML does not parse: ${first}`);
  }
  if (!isObj(doc)) file.fail('the file must be a map with a mappings list');
  for (const key of Object.keys(doc)) {
    if (key !== 'mappings' && key !== 'defaults')
      file.fail(`unknown key '${key}'; accepted: mappings, defaults`);
  }
  return doc;
}

function readDefaults(value: unknown, file: FileReader): Defaults {
  const defaults = value ?? {};
  if (!isObj(defaults)) file.fail('defaults must be a map');
  file.onlyKeys(defaults, DEFAULTS_KEYS, 'defaults');
  if (defaults.glob_disable_ordering === true) {
    file.fail(
      'defaults.glob_disable_ordering is not supported: glob mappings always apply in file order',
    );
  }
  return {
    observerType: file.observerType(defaults.observer_type ?? defaults.timer_type) ?? 'summary',
    matchType: defaults.match_type === 'regex' ? 'regex' : 'glob',
    buckets: file.buckets(defaults.histogram_options) ?? DEFAULT_BUCKETS,
    quantiles: file.quantiles(defaults.summary_options) ?? DEFAULT_QUANTILES,
  };
}

function globToRegex(match: string): RegExp {
  const parts = match
    .split('.')
    .map((field) => (field === '*' ? '([^.]*)' : field.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')));
  return new RegExp(`^${parts.join('\\.')}$`);
}

/** The pattern of a mapping, as its match type reads it. */
function compileMatch(m: Obj, defaults: Defaults, file: FileReader, where: string) {
  const match = typeof m.match === 'string' ? m.match : '';
  const matchType = m.match_type === undefined ? defaults.matchType : m.match_type;
  if (matchType === 'glob') {
    if (!METRIC_LINE.test(match)) file.fail(`${where}: invalid match: ${match}`);
    return { match, matchType, regex: globToRegex(match) } as const;
  }
  if (matchType !== 'regex') {
    file.fail(`${where}: unknown match_type ${JSON.stringify(matchType)}; accepted: glob, regex`);
  }
  const compiled = GoRegExp.compile(match);
  if (!compiled.ok) file.fail(`${where}: invalid regex ${match}: ${compiled.reason}`);
  return { match, matchType, regex: compiled.regexp } as const;
}

/**
 * A regex rule's name or label template with Go's Regexp.Expand references (`$name`, `${name}`,
 * `$1x` meaning the group named 1x) resolved to the `${N}` the mapper expands.
 */
function indexed(template: string, regexp: GoRegExp, file: FileReader, where: string): string {
  const result = indexedTemplate(template, regexp);
  if (!result.ok) file.fail(`${where}: ${result.reason}`);
  return result.text;
}

/** The metric name and action: a mapped metric needs a valid name; a dropped one none. */
function nameAndAction(m: Obj, file: FileReader, where: string) {
  const name = typeof m.name === 'string' ? m.name : '';
  if (m.action !== undefined && m.action !== 'map' && m.action !== 'drop')
    file.fail(`${where}: unknown action ${JSON.stringify(m.action)}; accepted: map, drop`);
  const action = m.action === 'drop' ? 'drop' : 'map';
  if (name === '' && action === 'map')
    file.fail(`${where}: metric mapping didn't set a metric name`);
  if (name !== '' && !METRIC_NAME.test(name))
    file.fail(`${where}: metric name '${name}' is not valid`);
  return { name, action } as const;
}

function labels(m: Obj, file: FileReader, where: string): [string, string][] {
  if (m.labels === undefined) return [];
  if (!isObj(m.labels)) file.fail(`${where}: labels must be a map`);
  return Object.entries(m.labels).map(([label, value]): [string, string] => {
    if (!LABEL_NAME.test(label)) file.fail(`${where}: invalid label key: ${label}`);
    return [label, String(value)];
  });
}

/** `timer` is statsd_exporter's older name for `observer`. */
function isMetricType(value: unknown): value is StatsdType | 'timer' {
  return value === 'counter' || value === 'gauge' || value === 'observer' || value === 'timer';
}

function metricType(m: Obj, file: FileReader, where: string): StatsdType | undefined {
  const type = m.match_metric_type;
  if (type === undefined) return undefined;
  if (!isMetricType(type)) file.fail(`${where}: unknown match_metric_type ${JSON.stringify(type)}`);
  return type === 'timer' ? 'observer' : type;
}

function readMapping(
  value: unknown,
  index: number,
  defaults: Defaults,
  file: FileReader,
): MappingRule {
  const where = `mapping ${index + 1}`;
  if (!isObj(value)) file.fail(`${where} must be a map`);
  file.onlyKeys(value, MAPPING_KEYS, where);
  if (value.honor_labels === true) file.fail(`${where}: honor_labels is not supported`);
  const named = nameAndAction(value, file, where);
  const { action } = named;
  const { match, matchType, regex } = compileMatch(value, defaults, file, where);
  const isGo = regex instanceof GoRegExp;
  const name = isGo ? indexed(named.name, regex, file, where) : named.name;
  const ruleLabels = labels(value, file, where).map(([label, template]): [string, string] => [
    label,
    isGo ? indexed(template, regex, file, `${where}: label ${label}`) : template,
  ]);
  const matchMetricType = metricType(value, file, where);
  if (value.scale !== undefined && typeof value.scale !== 'number')
    file.fail(`${where}: scale must be a number`);
  return {
    match,
    matchType,
    name,
    labels: ruleLabels,
    action,
    matchMetricType,
    observerType:
      file.observerType(value.observer_type ?? value.timer_type) ?? defaults.observerType,
    help: typeof value.help === 'string' ? value.help : undefined,
    scale: typeof value.scale === 'number' ? value.scale : undefined,
    buckets: file.buckets(value.histogram_options) ?? defaults.buckets,
    quantiles: file.quantiles(value.summary_options) ?? defaults.quantiles,
    regex,
  };
}

/** The rules of a mapping file, in file order; throws MapperError naming the source and the problem. */
export function readMappingFile(text: string, source: string): MappingRule[] {
  const file: FileReader = new FileReader(source);
  const doc = parseDocument(text, file);
  const defaults = readDefaults(doc.defaults, file);
  const mappings = doc.mappings ?? [];
  if (!Array.isArray(mappings)) file.fail('mappings must be a list');
  return mappings.map((m: unknown, i: number) => readMapping(m, i, defaults, file));
}
