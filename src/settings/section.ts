// What every settings section shares: a group of fields, their parsed values, optional text, TLS.
import type { FieldSpec } from './fields';
import { bool, str } from './fields';
import type { ClientTlsSettings } from './types';

/** Fields whose setting names share a prefix. */
export interface Group<F extends Record<string, FieldSpec<unknown>>> {
  readonly prefix: string;
  readonly fields: F;
}

/** Any group, for code that walks the schema without caring about its field types. */
export type AnyGroup = Group<Record<string, FieldSpec<unknown>>>;

export function group<F extends Record<string, FieldSpec<unknown>>>(
  prefix: string,
  fields: F,
): Group<F> {
  return { prefix, fields };
}

type ValueOf<S> = S extends FieldSpec<infer T> ? T : never;

/** The parsed values of one group, under its field names. */
export type Values<G extends AnyGroup> = {
  readonly [F in keyof G['fields']]: ValueOf<G['fields'][F]>;
};

/** Empty text means "not set". */
export function optional(text: string): string | undefined {
  return text === '' ? undefined : text;
}

/** The client TLS options a backend instance reads under its own prefix (REDIS_, MEMCACHE_). */
export function clientTlsFields() {
  return {
    TLS: bool(false),
    TLS_CLIENT_CERT: str(),
    TLS_CLIENT_KEY: str(),
    TLS_CACERT: str(),
    TLS_SKIP_HOSTNAME_VERIFICATION: bool(false),
  };
}

/** The client TLS settings of clientTlsFields(), or undefined while TLS is off. */
export function clientTlsSettings(values: {
  readonly TLS: boolean;
  readonly TLS_CLIENT_CERT: string;
  readonly TLS_CLIENT_KEY: string;
  readonly TLS_CACERT: string;
  readonly TLS_SKIP_HOSTNAME_VERIFICATION: boolean;
}): ClientTlsSettings | undefined {
  if (!values.TLS) return undefined;
  return {
    certFile: optional(values.TLS_CLIENT_CERT),
    keyFile: optional(values.TLS_CLIENT_KEY),
    caFile: optional(values.TLS_CACERT),
    serverName: undefined,
    skipHostnameVerification: values.TLS_SKIP_HOSTNAME_VERIFICATION,
  };
}
