// JSON values and google.protobuf.Struct, the form metadata takes on the wire, converted both ways.

/** A JSON value: descriptor metadata, dynamic metadata, the JSON API's bodies. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/**
 * google.protobuf.Value as @grpc/proto-loader and protobufjs decode and encode it. Decoded
 * without defaults, absent fields are left out, so every field may be missing.
 */
export interface StructValue {
  readonly nullValue?: string | number | null;
  readonly numberValue?: number;
  readonly stringValue?: string;
  readonly boolValue?: boolean;
  readonly structValue?: StructMessage;
  readonly listValue?: { readonly values?: readonly StructValue[] };
}

/** google.protobuf.Struct as decoded (an empty one may come without `fields`) or encoded. */
export interface StructMessage {
  readonly fields?: Readonly<Record<string, StructValue>>;
}

function encodeValue(value: JsonValue): StructValue {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(encodeValue) } };
  return { structValue: toStruct(value) };
}

/** google.protobuf.Struct from a JSON object. */
export function toStruct(object: Readonly<JsonObject>): StructMessage {
  const fields: Record<string, StructValue> = {};
  for (const [key, value] of Object.entries(object)) fields[key] = encodeValue(value);
  return { fields };
}

/** The JSON value a google.protobuf.Value holds; a Value with no kind set reads as null. */
function decodeValue(value: StructValue): JsonValue {
  if (value.structValue !== undefined) return fromStruct(value.structValue);
  if (value.listValue !== undefined) return (value.listValue.values ?? []).map(decodeValue);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null;
}

/** A JSON object from a decoded google.protobuf.Struct. */
export function fromStruct(struct: StructMessage): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(struct.fields ?? {})) out[key] = decodeValue(value);
  return out;
}
