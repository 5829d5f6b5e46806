// statsd_exporter's mapping format: statsd names to Prometheus names and labels.
import { parse as parseYaml } from 'yaml';

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
  readonly regex: RegExp;
}

/** The outcome of mapping one statsd name. */
export interface Mapped {
  /** Undefined for an unmapped name (exported under its escaped name) or a dropped one. */
  readonly rule: MappingRule | undefined;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly isDropped: boolean;
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

/**
 * Escapes a name into a valid Prometheus name the way statsd_exporter does: invalid characters
 * become `_`, a second `-` in a row is dropped, and a leading digit gets a `_` in front.
 */
export function escapeMetricName(name: string): string {
  let out = /^[0-9]/.test(name) ? '_' : '';
  let prev = '';
  for (const c of name) {
    if (/[a-zA-Z0-9_]/.test(c)) out += c;
    else if (!(c === '-' && prev === '-')) out += '_';
    prev = c;
  }
  return out;
}

/** Replaces $1, ${1} ... with the captures. */
function expand(template: string, captures: readonly (string | undefined)[]): string {
  return template.replace(
    /\$\{?(\d+)\}?/g,
    (_whole, index: string) => captures[Number(index)] ?? '',
  );
}

function globToRegex(match: string): RegExp {
  const parts = match
    .split('.')
    .map((field) => (field === '*' ? '([^.]*)' : field.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')));
  return new RegExp(`^${parts.join('\\.')}$`);
}

type Obj = Record<string, unknown>;

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numbers(value: unknown, what: string, source: string): number[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'number')) {
    throw new MapperError(source, `${what} must be a list of numbers`);
  }
  return value as number[];
}

function observerType(value: unknown, source: string): ObserverType | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  if (value === 'histogram' || value === 'summary') return value;
  throw new MapperError(
    source,
    `unknown observer_type ${JSON.stringify(value)}; accepted: histogram, summary`,
  );
}

function buckets(options: unknown, source: string): number[] | undefined {
  if (options === undefined) return undefined;
  if (!isObj(options)) throw new MapperError(source, 'histogram_options must be a map');
  return options.buckets === undefined
    ? undefined
    : numbers(options.buckets, 'histogram_options.buckets', source);
}

function quantiles(options: unknown, source: string): number[] | undefined {
  if (options === undefined) return undefined;
  if (!isObj(options) || !Array.isArray(options.quantiles)) return undefined;
  return options.quantiles.map((q: unknown) => {
    if (!isObj(q) || typeof q.quantile !== 'number')
      throw new MapperError(
        source,
        'summary_options.quantiles must be a list of {quantile, error}',
      );
    return q.quantile;
  });
}

/** Maps statsd names with the rules of one mapping file, glob rules first, then regex rules. */
export class MetricMapper {
  private readonly globs: MappingRule[];
  private readonly regexes: MappingRule[];

  private constructor(rules: readonly MappingRule[]) {
    this.globs = rules.filter((r) => r.matchType === 'glob');
    this.regexes = rules.filter((r) => r.matchType === 'regex');
  }

  /** Reads a mapping file; throws MapperError naming the source and the problem. */
  static fromYaml(text: string, source: string): MetricMapper {
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (err: unknown) {
      throw new MapperError(
        source,
        `the YAML does not parse: ${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}`,
      );
    }
    if (!isObj(doc)) throw new MapperError(source, 'the file must be a map with a mappings list');
    for (const key of Object.keys(doc)) {
      if (key !== 'mappings' && key !== 'defaults')
        throw new MapperError(source, `unknown key '${key}'; accepted: mappings, defaults`);
    }
    const defaults = doc.defaults ?? {};
    if (!isObj(defaults)) throw new MapperError(source, 'defaults must be a map');
    for (const key of Object.keys(defaults)) {
      if (!DEFAULTS_KEYS.has(key)) throw new MapperError(source, `defaults: unknown key '${key}'`);
    }
    if (defaults.glob_disable_ordering === true) {
      throw new MapperError(
        source,
        'defaults.glob_disable_ordering is not supported: glob mappings always apply in file order',
      );
    }
    const defaultObserver =
      observerType(defaults.observer_type ?? defaults.timer_type, source) ?? 'summary';
    const defaultMatchType = defaults.match_type === 'regex' ? 'regex' : 'glob';
    const defaultBuckets = buckets(defaults.histogram_options, source) ?? DEFAULT_BUCKETS;
    const defaultQuantiles = quantiles(defaults.summary_options, source) ?? DEFAULT_QUANTILES;
    const mappings = doc.mappings ?? [];
    if (!Array.isArray(mappings)) throw new MapperError(source, 'mappings must be a list');
    const rules = mappings.map((m: unknown, i: number): MappingRule => {
      const where = `mapping ${i + 1}`;
      if (!isObj(m)) throw new MapperError(source, `${where} must be a map`);
      for (const key of Object.keys(m)) {
        if (!MAPPING_KEYS.has(key)) throw new MapperError(source, `${where}: unknown key '${key}'`);
      }
      if (m.honor_labels === true)
        throw new MapperError(source, `${where}: honor_labels is not supported`);
      const match = typeof m.match === 'string' ? m.match : '';
      const name = typeof m.name === 'string' ? m.name : '';
      const action = m.action === 'drop' ? 'drop' : 'map';
      if (m.action !== undefined && m.action !== 'map' && m.action !== 'drop') {
        throw new MapperError(
          source,
          `${where}: unknown action ${JSON.stringify(m.action)}; accepted: map, drop`,
        );
      }
      if (name === '' && action === 'map')
        throw new MapperError(source, `${where}: metric mapping didn't set a metric name`);
      if (name !== '' && !METRIC_NAME.test(name))
        throw new MapperError(source, `${where}: metric name '${name}' is not valid`);
      const labels: [string, string][] = [];
      if (m.labels !== undefined) {
        if (!isObj(m.labels)) throw new MapperError(source, `${where}: labels must be a map`);
        for (const [label, value] of Object.entries(m.labels)) {
          if (!LABEL_NAME.test(label))
            throw new MapperError(source, `${where}: invalid label key: ${label}`);
          labels.push([label, String(value)]);
        }
      }
      const matchType = m.match_type === undefined ? defaultMatchType : m.match_type;
      if (matchType !== 'glob' && matchType !== 'regex') {
        throw new MapperError(
          source,
          `${where}: unknown match_type ${JSON.stringify(matchType)}; accepted: glob, regex`,
        );
      }
      let regex: RegExp;
      if (matchType === 'glob') {
        if (!METRIC_LINE.test(match))
          throw new MapperError(source, `${where}: invalid match: ${match}`);
        regex = globToRegex(match);
      } else {
        try {
          // Go's RE2 spells named groups (?P<name>...).
          regex = new RegExp(match.replace(/\(\?P</g, '(?<'));
        } catch (err: unknown) {
          throw new MapperError(
            source,
            `${where}: invalid regex ${match}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      }
      const metricType = m.match_metric_type;
      if (
        metricType !== undefined &&
        metricType !== 'counter' &&
        metricType !== 'gauge' &&
        metricType !== 'observer' &&
        metricType !== 'timer'
      ) {
        throw new MapperError(
          source,
          `${where}: unknown match_metric_type ${JSON.stringify(metricType)}`,
        );
      }
      if (m.scale !== undefined && typeof m.scale !== 'number')
        throw new MapperError(source, `${where}: scale must be a number`);
      return {
        match,
        matchType,
        name,
        labels,
        action,
        matchMetricType: metricType === 'timer' ? 'observer' : metricType,
        observerType: observerType(m.observer_type ?? m.timer_type, source) ?? defaultObserver,
        help: typeof m.help === 'string' ? m.help : undefined,
        scale: typeof m.scale === 'number' ? m.scale : undefined,
        buckets: buckets(m.histogram_options, source) ?? defaultBuckets,
        quantiles: quantiles(m.summary_options, source) ?? defaultQuantiles,
        regex,
      };
    });
    return new MetricMapper(rules);
  }

  /** Maps one statsd name of one type. */
  map(name: string, type: StatsdType): Mapped {
    for (const rule of this.globs) {
      if (rule.matchMetricType !== undefined && rule.matchMetricType !== type) continue;
      const match = rule.regex.exec(name);
      if (match === null) continue;
      return this.result(rule, [...match]);
    }
    for (const rule of this.regexes) {
      // Regex mappings match anywhere in the name, as statsd_exporter's do.
      const match = rule.regex.exec(name);
      if (match === null) continue;
      if (rule.matchMetricType !== undefined && rule.matchMetricType !== type) continue;
      return this.result(rule, [...match]);
    }
    return { rule: undefined, name: escapeMetricName(name), labels: {}, isDropped: false };
  }

  private result(rule: MappingRule, captures: readonly (string | undefined)[]): Mapped {
    if (rule.action === 'drop') return { rule, name: '', labels: {}, isDropped: true };
    const labels: Record<string, string> = {};
    for (const [label, template] of rule.labels) labels[label] = expand(template, captures);
    return { rule, name: escapeMetricName(expand(rule.name, captures)), labels, isDropped: false };
  }
}
