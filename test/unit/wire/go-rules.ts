// The test oracle's first step: bytes rewritten as protobuf-go would read them, so that
// protobufjs, which departs from Go in the ways listed below, can decode the result.
//
// Driven by the message's protobufjs reflection, not by the codec under test: every
// sub-message is cut out by its own length before it is read; a known field of another wire
// type than its declared one is skipped as unknown (protobufjs reads it as the declared type);
// a singular message written twice is the merge of both (protobufjs keeps the last); strings
// must be UTF-8; varints end by their tenth byte and fit 64 bits; field numbers lie in
// 1..2^29-1; groups are skipped up to the end marker of their own number. The output is the
// canonical encoding of what was kept, known fields only.
//
// The departures of this service from Go that docs/wire-format.md lists are modelled too:
// a uint32 field past 32 bits is refused where it is read, an enum past 32 bits once the
// message is read, instead of keeping their low 32 bits.
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';

/** Bytes protobuf-go (or this service, where it departs from Go on purpose) refuses. */
export class RefusedByRules extends Error {}

const MAX_UINT32 = 0xffffffffn;
const MAX_FIELD = 2 ** 29 - 1;
const MAX_GROUP_FIELD = 2 ** 31 - 1;

interface Cursor {
  readonly bytes: Uint8Array;
  pos: number;
}

function varint(c: Cursor): bigint {
  let value = 0n;
  for (let i = 0; i < 10; i++) {
    const byte = c.bytes[c.pos++];
    if (byte === undefined) throw new RefusedByRules('truncated varint');
    if (i === 9 && byte > 1) throw new RefusedByRules('varint past 64 bits');
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if (byte < 0x80) return value;
  }
  throw new RefusedByRules('varint past 64 bits');
}

function take(c: Cursor, length: bigint | number): Uint8Array {
  const end = c.pos + Number(length);
  if (end > c.bytes.length) throw new RefusedByRules('field past the end');
  const out = c.bytes.subarray(c.pos, end);
  c.pos = end;
  return out;
}

/** Go reads field numbers up to 2^29-1 in a message, up to 2^31-1 inside a group. */
function tag(c: Cursor, maxField = MAX_FIELD): { field: number; wireType: number } {
  const value = varint(c);
  const field = Number(value >> 3n);
  if (field < 1 || field > maxField) throw new RefusedByRules('field number out of range');
  return { field, wireType: Number(value & 7n) };
}

function skip(c: Cursor, field: number, wireType: number, depth = 0): void {
  if (wireType === 0) varint(c);
  else if (wireType === 1) take(c, 8);
  else if (wireType === 2) take(c, varint(c));
  else if (wireType === 5) take(c, 4);
  else if (wireType === 3) {
    if (depth > 10_000) throw new RefusedByRules('groups too deep');
    for (;;) {
      const inner = tag(c, MAX_GROUP_FIELD);
      if (inner.wireType === 4) {
        if (inner.field !== field) throw new RefusedByRules('group ends with another number');
        return;
      }
      skip(c, inner.field, inner.wireType, depth + 1);
    }
  } else throw new RefusedByRules(`wire type ${wireType}`);
}

function declaredWireType(field: protobuf.Field): number {
  if (field.resolvedType instanceof protobuf.Type) return 2;
  if (field.type === 'string' || field.type === 'bytes') return 2;
  if (field.resolvedType instanceof protobuf.Enum) return 0;
  if (['uint32', 'uint64', 'int32', 'int64', 'bool'].includes(field.type)) return 0;
  throw new Error(`go-rules: field type ${field.type} is not modelled`);
}

function encodeVarint(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

/** What one message keeps, per field number, in the order written. */
type Kept = Map<number, (Uint8Array | bigint)[]>;

function readKnown(c: Cursor, field: protobuf.Field, kept: Kept): void {
  const values = kept.get(field.id) ?? [];
  kept.set(field.id, values);
  if (declaredWireType(field) === 0) {
    const value = varint(c);
    if (field.type === 'uint32' && value > MAX_UINT32)
      throw new RefusedByRules('uint32 past 32 bits');
    values.push(field.type === 'bool' ? (value === 0n ? 0n : 1n) : value);
    return;
  }
  const bytes = take(c, varint(c));
  if (field.resolvedType instanceof protobuf.Type) {
    // Each occurrence must be a valid message on its own; a singular one keeps its bytes
    // to be merged with the others once the whole message is read.
    const normalized = normalize(field.resolvedType, bytes);
    values.push(field.repeated ? normalized : bytes);
  } else {
    if (field.type === 'string' && !isUtf8(bytes)) throw new RefusedByRules('string not UTF-8');
    values.push(bytes);
  }
}

function emit(type: protobuf.Type, kept: Kept): Buffer {
  const out: number[] = [];
  for (const field of type.fieldsArray) {
    const values = kept.get(field.id);
    if (values === undefined || values.length === 0) continue;
    let chosen = values;
    // Merging is reading the occurrences' bytes one after the other as one message.
    if (!field.repeated && field.resolvedType instanceof protobuf.Type)
      chosen = [normalize(field.resolvedType, Buffer.concat(values as Uint8Array[]))];
    else if (!field.repeated) chosen = values.slice(-1);
    for (const value of chosen) {
      if (typeof value === 'bigint') {
        if (field.resolvedType instanceof protobuf.Enum && value > MAX_UINT32)
          throw new RefusedByRules('enum past 32 bits');
        out.push(...encodeVarint(BigInt(field.id * 8)), ...encodeVarint(value));
      } else {
        out.push(...encodeVarint(BigInt(field.id * 8 + 2)), ...encodeVarint(BigInt(value.length)));
        out.push(...value);
      }
    }
  }
  return Buffer.from(out);
}

/**
 * `bytes` as a message of `type` read by protobuf-go's rules, re-encoded canonically.
 * Throws RefusedByRules where those rules refuse the bytes.
 */
export function normalize(type: protobuf.Type, bytes: Uint8Array): Buffer {
  const c: Cursor = { bytes, pos: 0 };
  const kept: Kept = new Map();
  while (c.pos < bytes.length) {
    const { field: number, wireType } = tag(c);
    if (wireType === 4) throw new RefusedByRules('end-group marker outside a group');
    const field = type.fieldsById[number];
    if (field !== undefined && declaredWireType(field) === wireType) readKnown(c, field, kept);
    else skip(c, number, wireType);
  }
  return emit(type, kept);
}
