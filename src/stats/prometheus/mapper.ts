// statsd_exporter's mapping: statsd names to Prometheus names and labels, by a mapping file's rules.
import { readMappingFile, type MappingRule, type StatsdType } from './mapping-file';

export { MapperError, type MappingRule, type ObserverType, type StatsdType } from './mapping-file';

/** The outcome of mapping one statsd name. */
export interface Mapped {
  /** Undefined for an unmapped name (exported under its escaped name) or a dropped one. */
  readonly rule: MappingRule | undefined;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly isDropped: boolean;
}

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
    return new MetricMapper(readMappingFile(text, source));
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
