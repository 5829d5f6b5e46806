// A strict reader of proto3 JSON (as Envoy reads its YAML configuration) against protobufjs
// reflection: unknown fields, wrong types, unknown Any types and the simple protoc-gen-validate
// rules (required, min_len, min_items, number bounds) are reported, as Envoy would refuse them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const DEPS = path.join(ROOT, 'node_modules', '@grpc', 'grpc-js-xds', 'deps');
const INCLUDE_DIRS = [
  ...['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(DEPS, d)),
  // google/protobuf/descriptor.proto, which the annotations import.
  path.join(ROOT, 'node_modules', 'protobufjs'),
];

/** Loads the named .proto files (and what they import) from Envoy's upstream API. */
export function loadEnvoyProtos(files: readonly string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of INCLUDE_DIRS) {
      const candidate = path.join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return target;
  };
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}

type Json = unknown;

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const UINT32 = { min: 0, max: 2 ** 32 - 1 };
const SCALAR_RANGES: Readonly<Record<string, { min: number; max: number }>> = {
  int32: INT32,
  sint32: INT32,
  sfixed32: INT32,
  uint32: UINT32,
  fixed32: UINT32,
};
const LONGS = new Set(['int64', 'sint64', 'sfixed64', 'uint64', 'fixed64']);
/** Well-known types whose JSON form is not an object of their fields. */
const SPECIAL_JSON = new Set([
  '.google.protobuf.Any',
  '.google.protobuf.Duration',
  '.google.protobuf.Timestamp',
  '.google.protobuf.FieldMask',
  '.google.protobuf.Struct',
  '.google.protobuf.ListValue',
  '.google.protobuf.Value',
  '.google.protobuf.Empty',
]);
const WRAPPERS: Readonly<Record<string, string>> = {
  '.google.protobuf.BoolValue': 'bool',
  '.google.protobuf.StringValue': 'string',
  '.google.protobuf.BytesValue': 'bytes',
  '.google.protobuf.DoubleValue': 'double',
  '.google.protobuf.FloatValue': 'float',
  '.google.protobuf.Int32Value': 'int32',
  '.google.protobuf.UInt32Value': 'uint32',
  '.google.protobuf.Int64Value': 'int64',
  '.google.protobuf.UInt64Value': 'uint64',
};

function isObject(v: Json): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Checks JSON values against message types; problems are collected as `path: reason`. */
export class ProtoJsonChecker {
  readonly problems: string[] = [];

  constructor(private readonly root: protobuf.Root) {}

  message(type: protobuf.Type, value: Json, at: string): void {
    if (value === null) return;
    if (this.wellKnown(type, value, at)) return;
    if (!isObject(value)) {
      this.problems.push(`${at}: expected a ${type.name} message`);
      return;
    }
    const byName = new Map<string, protobuf.Field>();
    for (const field of type.fieldsArray) {
      byName.set(field.name, field);
      byName.set(camel(field.name), field);
    }
    const seen = new Set<protobuf.Field>();
    for (const [key, fieldValue] of Object.entries(value)) {
      const field = byName.get(key);
      if (field === undefined) {
        this.problems.push(`${at}.${key}: unknown field of ${type.fullName.slice(1)}`);
        continue;
      }
      if (seen.has(field)) this.problems.push(`${at}.${key}: ${field.name} given twice`);
      seen.add(field);
      this.field(field, fieldValue, `${at}.${key}`);
    }
    this.oneofs(type, seen, at);
    for (const field of type.fieldsArray) {
      const isSet = seen.has(field) && value[field.name] !== null;
      // A oneof member's rules apply only when it is the member set.
      const isRequired =
        field.partOf === null && field.options?.['(validate.rules).message.required'] === true;
      if (!isSet && isRequired) this.problems.push(`${at}.${field.name}: required`);
    }
  }

  private oneofs(type: protobuf.Type, seen: Set<protobuf.Field>, at: string): void {
    for (const oneof of type.oneofsArray) {
      const set = oneof.fieldsArray.filter((f) => seen.has(f));
      if (set.length > 1)
        this.problems.push(`${at}: only one of ${set.map((f) => f.name).join(', ')} may be set`);
      if (set.length === 0 && oneof.options?.['(validate.required)'] === true)
        this.problems.push(`${at}: one of ${oneof.oneof.join(', ')} is required`);
    }
  }

  private field(field: protobuf.Field, value: Json, at: string): void {
    if (field.map) {
      if (!isObject(value)) {
        this.problems.push(`${at}: expected a map`);
        return;
      }
      for (const [k, v] of Object.entries(value)) this.single(field, v, `${at}.${k}`);
      return;
    }
    if (field.repeated) {
      if (!Array.isArray(value)) {
        this.problems.push(`${at}: expected a list`);
        return;
      }
      const minItems = field.options?.['(validate.rules).repeated.min_items'];
      if (typeof minItems === 'number' && value.length < minItems)
        this.problems.push(`${at}: at least ${minItems} item(s)`);
      value.forEach((v, i) => {
        this.single(field, v, `${at}[${i}]`);
      });
      return;
    }
    this.single(field, value, at);
  }

  private single(field: protobuf.Field, value: Json, at: string): void {
    const resolved = field.resolvedType;
    if (resolved instanceof protobuf.Type) this.message(resolved, value, at);
    else if (resolved instanceof protobuf.Enum) this.enumValue(resolved, value, at);
    else this.scalar(field.type, value, at, field.options ?? {});
  }

  private enumValue(type: protobuf.Enum, value: Json, at: string): void {
    if (typeof value === 'string' && value in type.values) return;
    if (typeof value === 'number' && Object.values(type.values).includes(value)) return;
    this.problems.push(`${at}: ${JSON.stringify(value)} is not a value of ${type.name}`);
  }

  private scalar(kind: string, value: Json, at: string, options: Record<string, unknown>): void {
    const expected = this.scalarType(kind, value);
    if (expected !== undefined) {
      this.problems.push(`${at}: expected ${expected}, got ${JSON.stringify(value)}`);
      return;
    }
    if (kind === 'string') {
      const minLen = options['(validate.rules).string.min_len'];
      if (typeof minLen === 'number' && (value as string).length < minLen)
        this.problems.push(`${at}: at least ${minLen} character(s)`);
      return;
    }
    const n = Number(value);
    for (const [op, test] of [
      ['lte', (limit: number) => n <= limit],
      ['lt', (limit: number) => n < limit],
      ['gte', (limit: number) => n >= limit],
      ['gt', (limit: number) => n > limit],
    ] as const) {
      const limit = options[`(validate.rules).${kind}.${op}`];
      if (typeof limit === 'number' && !test(limit))
        this.problems.push(`${at}: ${n} must be ${op} ${limit}`);
    }
  }

  /** What a scalar of this kind should have been, or undefined when `value` is one. */
  private scalarType(kind: string, value: Json): string | undefined {
    switch (kind) {
      case 'string':
        return typeof value === 'string' ? undefined : 'a string';
      case 'bool':
        return typeof value === 'boolean' ? undefined : 'true or false';
      case 'bytes':
        return typeof value === 'string' && /^[A-Za-z0-9+/_-]*=*$/.test(value)
          ? undefined
          : 'base64 text';
      case 'double':
      case 'float':
        return typeof value === 'number' || ['NaN', 'Infinity', '-Infinity'].includes(String(value))
          ? undefined
          : 'a number';
      default: {
        const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
        if (typeof n !== 'number' || !Number.isInteger(n)) return 'a whole number';
        const range = SCALAR_RANGES[kind];
        if (range !== undefined) return n < range.min || n > range.max ? `a ${kind}` : undefined;
        return LONGS.has(kind) ? undefined : `a known scalar (${kind})`;
      }
    }
  }

  /** The well-known types with a JSON form of their own; true when `type` is one. */
  private wellKnown(type: protobuf.Type, value: Json, at: string): boolean {
    const name = type.fullName;
    const wrapped = WRAPPERS[name];
    if (wrapped !== undefined) {
      this.scalar(wrapped, value, at, {});
      return true;
    }
    switch (name) {
      case '.google.protobuf.Any':
        this.any(value, at);
        return true;
      case '.google.protobuf.Duration':
        if (typeof value !== 'string' || !/^-?\d+(\.\d{1,9})?s$/.test(value))
          this.problems.push(`${at}: expected a duration such as "0.25s"`);
        return true;
      case '.google.protobuf.Timestamp':
      case '.google.protobuf.FieldMask':
        if (typeof value !== 'string') this.problems.push(`${at}: expected a string`);
        return true;
      case '.google.protobuf.Struct':
        if (!isObject(value)) this.problems.push(`${at}: expected a map`);
        return true;
      case '.google.protobuf.ListValue':
        if (!Array.isArray(value)) this.problems.push(`${at}: expected a list`);
        return true;
      case '.google.protobuf.Value':
        return true;
      case '.google.protobuf.Empty':
        if (!isObject(value) || Object.keys(value).length > 0)
          this.problems.push(`${at}: expected {}`);
        return true;
      default:
        return false;
    }
  }

  private any(value: Json, at: string): void {
    if (!isObject(value) || typeof value['@type'] !== 'string') {
      this.problems.push(`${at}: an Any needs "@type"`);
      return;
    }
    const typeUrl = value['@type'];
    const typeName = typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
    let packed: protobuf.Type;
    try {
      packed = this.root.lookupType(typeName);
    } catch {
      this.problems.push(`${at}: unknown type ${typeUrl} (not an Envoy API type, or not loaded)`);
      return;
    }
    const rest = Object.fromEntries(Object.entries(value).filter(([k]) => k !== '@type'));
    // An Any of a type with a JSON form of its own carries that form under "value".
    const name = packed.fullName;
    const special =
      (SPECIAL_JSON.has(name) && name !== '.google.protobuf.Empty') || name in WRAPPERS;
    if (special) this.message(packed, rest.value ?? null, `${at}.value`);
    else this.message(packed, rest, at);
  }
}
