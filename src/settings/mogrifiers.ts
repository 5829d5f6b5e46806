// DogStatsD mogrifiers of the stats section: DOG_STATSD_MOGRIFIER_<NAME>_{PATTERN,NAME,TAGS}.
import { GoRegExp } from '../lib/go-regexp';
import { describeValue, lookup, notValid, type Environment, type Found } from './environment';
import type { SettingsProblem } from './errors';
import { map as mapField } from './fields';
import type { MogrifierSettings } from './types';

const TAGS_FIELD = mapField();

/**
 * The regular expression of one mogrifier, as written (a Go one, run with RE2's semantics),
 * checked; undefined when missing.
 */
function mogrifierPattern(
  found: Found | undefined,
  name: string,
  problems: SettingsProblem[],
): string | undefined {
  if (found === undefined) {
    problems.push({
      setting: `DOG_STATSD_MOGRIFIER_${name}_PATTERN`,
      message: `is not set; mogrifier ${name} needs a regular expression`,
    });
    return undefined;
  }
  const compiled = GoRegExp.compile(found.text);
  if (!compiled.ok) {
    problems.push({
      setting: found.name,
      message: `${describeValue(found.text)} is not a valid regular expression (${compiled.reason}); patterns are Go's (RE2 syntax)`,
    });
  }
  return found.text;
}

function mogrifierTags(
  found: Found | undefined,
  problems: SettingsProblem[],
): Readonly<Record<string, string>> {
  if (found === undefined) return {};
  const parsed = TAGS_FIELD.parse(found.text);
  if (parsed.ok) return parsed.value;
  problems.push({ setting: found.name, message: notValid(found.text, parsed.accepted) });
  return {};
}

function mogrifier(
  env: Environment,
  given: string,
  problems: SettingsProblem[],
): MogrifierSettings | undefined {
  // The reference reads these through envconfig, which upper-cases the whole name.
  const name = given.toUpperCase();
  const read = (suffix: string): Found | undefined =>
    lookup(
      env,
      `DOG_STATSD_MOGRIFIER_${name}_${suffix}`,
      `DOG_STATSD_MOGRIFIERS_${name}_${suffix}`,
    );
  const pattern = mogrifierPattern(read('PATTERN'), name, problems);
  const metricName = read('NAME');
  if (metricName === undefined) {
    problems.push({
      setting: `DOG_STATSD_MOGRIFIER_${name}_NAME`,
      message: `is not set; mogrifier ${name} needs a metric name`,
    });
  }
  const tags = mogrifierTags(read('TAGS'), problems);
  if (pattern === undefined || metricName === undefined) return undefined;
  return { name, pattern, metricName: metricName.text, tags };
}

/** The mogrifiers USE_DOG_STATSD_MOGRIFIERS names, each read and checked. */
export function mogrifierSettings(
  env: Environment,
  names: readonly string[],
  problems: SettingsProblem[],
): MogrifierSettings[] {
  return names
    .map((given) => mogrifier(env, given, problems))
    .filter((m): m is MogrifierSettings => m !== undefined);
}
