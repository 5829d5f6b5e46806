// Typed field parsers for environment settings: booleans, numbers, Go durations, lists and maps.
import { parseGoDurationMs } from '../lib/durations';
import { parseGoBool } from '../lib/go-syntax';

/** The result of parsing one raw environment value. */
export type FieldResult<T> = { ok: true; value: T } | { ok: false; accepted: string };

/** How one setting is read: its default and a parser for a non-empty value. */
export interface FieldSpec<T> {
  readonly defaultValue: T;
  /** The default as an operator writes it, where that differs from the value (a duration). */
  readonly defaultText?: string;
  /** Human description of the accepted values, used in error messages. */
  readonly accepted: string;
  parse(text: string): FieldResult<T>;
  /**
   * A secret (a password, a token, credentials in a URL): messages never quote its value,
   * and nothing logs or shows it.
   */
  readonly isSecret?: boolean;
}

/** The same field, marked secret: a refusal says the value is hidden instead of quoting it. */
export function secret<T>(spec: FieldSpec<T>): FieldSpec<T> {
  return { ...spec, isSecret: true };
}

function ok<T>(value: T): FieldResult<T> {
  return { ok: true, value };
}

/** A free string. */
export function str(defaultValue = ''): FieldSpec<string> {
  return { defaultValue, accepted: 'any text', parse: (text) => ok(text) };
}

/** A boolean as Go's strconv.ParseBool reads it. */
export function bool(defaultValue: boolean): FieldSpec<boolean> {
  const accepted = 'true, false, 1, 0, t, f, TRUE, FALSE, True, False';
  return {
    defaultValue,
    accepted,
    parse: (text) => {
      const value = parseGoBool(text);
      return value === undefined ? { ok: false, accepted } : ok(value);
    },
  };
}

/** An integer within [min, max]. */
export function int(
  defaultValue: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): FieldSpec<number> {
  const accepted =
    max === Number.MAX_SAFE_INTEGER
      ? `a whole number of at least ${min}`
      : `a whole number from ${min} to ${max}`;
  return {
    defaultValue,
    accepted,
    parse: (text) => {
      const trimmed = text.trim();
      let value: number;
      if (/^[+-]?\d+$/.test(trimmed)) value = Number(trimmed);
      else if (/^0x[0-9a-f]+$/i.test(trimmed)) value = Number.parseInt(trimmed.slice(2), 16);
      else return { ok: false, accepted };
      if (!Number.isSafeInteger(value) || value < min || value > max)
        return { ok: false, accepted };
      return ok(value);
    },
  };
}

/** A TCP port; 0 asks the system for a free one. */
export function port(defaultValue: number): FieldSpec<number> {
  return int(defaultValue, 0, 65535);
}

/** A decimal number within [min, max]. */
export function float(defaultValue: number, min: number, max = Infinity): FieldSpec<number> {
  const accepted =
    max === Infinity ? `a number of at least ${min}` : `a number from ${min} to ${max}`;
  return {
    defaultValue,
    accepted,
    parse: (text) => {
      const trimmed = text.trim();
      if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(trimmed)) return { ok: false, accepted };
      const value = Number(trimmed);
      if (!Number.isFinite(value) || value < min || value > max) return { ok: false, accepted };
      return ok(value);
    },
  };
}

/** A Go duration such as `150us`, `1m30s` or `10s`, held in milliseconds. */
export function duration(defaultText: string): FieldSpec<number> {
  const accepted = 'a duration such as 150us, 500ms, 10s, 1m30s or 24h (units ns, us, ms, s, m, h)';
  const defaultValue = parseGoDurationMs(defaultText);
  if (defaultValue === undefined) throw new Error(`bad default duration ${defaultText}`);
  return {
    defaultValue,
    defaultText,
    accepted,
    parse: (text) => {
      const value = parseGoDurationMs(text);
      if (value === undefined || value < 0) return { ok: false, accepted };
      return ok(value);
    },
  };
}

/** One of a fixed set of words, compared without regard to case; the canonical spelling is kept. */
export function oneOf<const T extends string>(
  defaultValue: T,
  values: readonly T[],
  aliases: Readonly<Record<string, T>> = {},
): FieldSpec<T> {
  const accepted = values.join(', ');
  const lookup = new Map<string, T>();
  for (const value of values) lookup.set(value.toLowerCase(), value);
  for (const [alias, value] of Object.entries(aliases)) lookup.set(alias.toLowerCase(), value);
  return {
    defaultValue,
    accepted,
    parse: (text) => {
      const value = lookup.get(text.trim().toLowerCase());
      return value === undefined ? { ok: false, accepted } : ok(value);
    },
  };
}

/** A comma-separated list; empty items are dropped. */
export function list(): FieldSpec<readonly string[]> {
  return {
    defaultValue: Object.freeze([]),
    accepted: 'a comma-separated list',
    parse: (text) =>
      ok(
        Object.freeze(
          text
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== ''),
        ),
      ),
  };
}

/**
 * A comma-separated list of `key:value` pairs, as the reference reads maps. With
 * `allowEquals` a pair may also be `key=value`: the reference reads CONFIG_GRPC_XDS_NODE_METADATA
 * by splitting at `=` only, so a pair with `=` is split there (keys such as `envoy.io:zone` keep
 * their colon) and `:` is the separator only of pairs without one.
 */
export function map(allowEquals = false): FieldSpec<Readonly<Record<string, string>>> {
  const accepted = allowEquals
    ? 'a comma-separated list of key:value (or key=value) pairs, e.g. k1:v1,k2:v2'
    : 'a comma-separated list of key:value pairs, e.g. k1:v1,k2:v2';
  return {
    defaultValue: Object.freeze({}),
    accepted,
    parse: (text) => {
      const out: Record<string, string> = {};
      for (const item of text.split(',')) {
        if (item.trim() === '') continue;
        const equals = allowEquals ? item.indexOf('=') : -1;
        const at = equals >= 0 ? equals : item.indexOf(':');
        if (at <= 0) return { ok: false, accepted };
        out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
      }
      return ok(Object.freeze(out));
    },
  };
}
