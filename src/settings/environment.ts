// Reading the environment: a setting under any of its spellings, and every group of the schema.
import { namesFor } from './aliases';
import type { SettingsProblem } from './errors';
import type { AnyGroup, Values } from './section';

export type Environment = Readonly<Record<string, string | undefined>>;

/** A value found in the environment and the name it was given under. */
export interface Found {
  readonly name: string;
  readonly text: string;
}

/**
 * The value of a setting given under any of its real spellings, or else under a neutral one:
 * a real name always wins.
 */
export function lookup(env: Environment, ...realNames: readonly string[]): Found | undefined {
  // namesFor lists a name's own spelling first, then its aliases.
  const names = [...realNames, ...realNames.flatMap((real) => namesFor(real).slice(1))];
  for (const name of names) {
    const text = env[name];
    // An empty value counts as unset, as container runtimes and charts often pass empty strings.
    if (text !== undefined && text !== '') return { name, text };
  }
  return undefined;
}

/** A value as messages quote it. */
export function describeValue(text: string): string {
  return JSON.stringify(text);
}

/** The message for a value its field cannot parse; a secret's value is never quoted. */
export function notValid(text: string, accepted: string, isSecret = false): string {
  return `${isSecret ? 'the value given (a secret, not shown)' : describeValue(text)} is not valid; accepted: ${accepted}`;
}

/** The parsed values of every group of a schema, under the group names. */
export type SchemaValues<S extends Readonly<Record<string, AnyGroup>>> = {
  readonly [G in keyof S]: Values<S[G]>;
};

/** What reading a schema found: the values, the problems, and which names were given. */
export interface SchemaReading<S extends Readonly<Record<string, AnyGroup>>> {
  readonly values: SchemaValues<S>;
  readonly problems: SettingsProblem[];
  /** The name a setting was given under (an alias, perhaps), or its real name when unset. */
  readonly nameOf: (realName: string) => string;
  /** True when the environment gave the setting, under any spelling. */
  readonly isGiven: (realName: string) => boolean;
}

function readGroup(
  env: Environment,
  g: AnyGroup,
  problems: SettingsProblem[],
  sources: Map<string, string>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(g.fields)) {
    const realName = g.prefix + field;
    const found = lookup(env, realName);
    values[field] = spec.defaultValue;
    if (found === undefined) continue;
    sources.set(realName, found.name);
    const result = spec.parse(found.text);
    if (result.ok) values[field] = result.value;
    else
      problems.push({
        setting: found.name,
        message: notValid(found.text, result.accepted, spec.isSecret === true),
      });
  }
  return values;
}

/**
 * Reads every group of `schema`; a value that does not parse is a problem, and its default
 * stands in for it so the sections can still check everything else.
 */
export function readSchema<S extends Readonly<Record<string, AnyGroup>>>(
  env: Environment,
  schema: S,
): SchemaReading<S> {
  const problems: SettingsProblem[] = [];
  const sources = new Map<string, string>();
  const values: Record<string, Record<string, unknown>> = {};
  for (const [name, g] of Object.entries(schema))
    values[name] = readGroup(env, g, problems, sources);
  return {
    // Each group was filled field by field from its own specs, so it has the schema's shape.
    values: values as SchemaValues<S>,
    problems,
    nameOf: (realName) => sources.get(realName) ?? realName,
    isGiven: (realName) => sources.has(realName),
  };
}
