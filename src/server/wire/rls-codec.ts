// RateLimitRequest decoder and RateLimitResponse encoder for the gRPC hot path. They go
// straight between bytes and the engine's types without building protobuf objects in between;
// the decoder refuses what requestFromWire refuses, with the same words (request-rules.ts).
// Field numbers and the decoding rules: docs/wire-format.md.
import type { JsonObject, JsonValue, Unit } from '../../config';
import type { RateLimitRequest, RateLimitResponse, RequestDescriptor } from '../../engine';
import { MAX_UINT32 } from '../../lib/uint32';
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '../../settings';
import { MalformedMessage, ProtoReader, ProtoWriter, WIRE_BYTES, WIRE_VARINT } from './protobuf';
import { badRequest, overrideUnit, tooMany } from './request-rules';

/** RateLimitResponse.RateLimit.Unit numbers. */
const RESPONSE_UNITS: Readonly<Record<Unit, number>> = {
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
};

const CODES = { OK: 1, OVER_LIMIT: 2 } as const;

/**
 * Where a string field ends once it is known to hold at most `max` bytes; -1 when it holds
 * more, for the caller to say which field it was. No error-making closure is passed in: that
 * would be two allocations for every entry of every request.
 */
function boundedEnd(r: ProtoReader, max: number): number {
  const end = r.delimited();
  return end - r.pos > max ? -1 : end;
}

const entryPath = (index: number, entry: number): string =>
  `descriptors[${index}].entries[${entry}]`;

function entryOf(
  r: ProtoReader,
  limits: RequestLimits,
  index: number,
  entry: number,
): { key: string; value: string } {
  const outer = r.enter();
  let key = '';
  let value = '';
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === (1 << 3) + WIRE_BYTES) {
      const end = boundedEnd(r, limits.maxKeyBytes);
      if (end < 0) throw tooMany.keyBytes(limits, `${entryPath(index, entry)}.key`);
      key = r.utf8(end);
    } else if (tag === (2 << 3) + WIRE_BYTES) {
      const end = boundedEnd(r, limits.maxValueBytes);
      if (end < 0) throw tooMany.valueBytes(limits, `${entryPath(index, entry)}.value`);
      value = r.utf8(end);
    } else r.skipField(tag);
  }
  r.leave(outer);
  return { key, value };
}

/**
 * A uint32 field. A correct encoder never writes more than 32 bits there; a value that does
 * not fit is refused as JSON refuses it, rather than cut to its low bits as protobuf allows.
 */
function uint32Field(r: ProtoReader, what: string): number {
  const value = r.varint();
  if (value > MAX_UINT32)
    throw badRequest(`${what} must be a whole number from 0 to ${MAX_UINT32}`);
  return value;
}

/**
 * The fields of a descriptor as read so far. A singular sub-message written more than once is
 * merged field by field, as protobuf readers merge it, so the override and the addend are
 * built only once the whole descriptor has been read.
 */
interface DescriptorFields {
  hasLimit: boolean;
  requestsPerUnit: number;
  unitNumber: number;
  /** The UInt64Value's value; undefined while the descriptor has none. */
  hitsAddend: number | undefined;
}

function readOverride(r: ProtoReader, d: DescriptorFields, index: number): void {
  const outer = r.enter();
  d.hasLimit = true;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === (1 << 3) + WIRE_VARINT)
      d.requestsPerUnit = uint32Field(r, `descriptors[${index}].limit.requests_per_unit`);
    // Checked once the descriptor is read: any number but SECOND..YEAR is refused.
    else if (tag === (2 << 3) + WIRE_VARINT) d.unitNumber = r.varint();
    else r.skipField(tag);
  }
  r.leave(outer);
}

/** google.protobuf.UInt64Value: a wrapper without its value means zero. */
function readUint64Value(r: ProtoReader, d: DescriptorFields): void {
  const outer = r.enter();
  d.hitsAddend ??= 0;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === (1 << 3) + WIRE_VARINT) d.hitsAddend = r.varint();
    else r.skipField(tag);
  }
  r.leave(outer);
}

function descriptorOf(r: ProtoReader, index: number, limits: RequestLimits): RequestDescriptor {
  const outer = r.enter();
  const entries: { key: string; value: string }[] = [];
  const d: DescriptorFields = {
    hasLimit: false,
    requestsPerUnit: 0,
    unitNumber: 0,
    hitsAddend: undefined,
  };
  let isNegativeHits = false;
  while (r.pos < r.end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) + WIRE_BYTES:
        if (entries.length >= limits.maxEntries) throw tooMany.entries(limits, index);
        entries.push(entryOf(r, limits, index, entries.length));
        break;
      case (2 << 3) + WIRE_BYTES:
        readOverride(r, d, index);
        break;
      case (3 << 3) + WIRE_BYTES:
        readUint64Value(r, d);
        break;
      case (4 << 3) + WIRE_VARINT:
        isNegativeHits = r.varint() !== 0;
        break;
      default:
        r.skipField(tag);
    }
  }
  r.leave(outer);
  return {
    entries,
    limit: d.hasLimit
      ? { requestsPerUnit: d.requestsPerUnit, unit: overrideUnit(d.unitNumber, index) }
      : undefined,
    hitsAddend: d.hitsAddend === undefined ? undefined : safeAddend(d.hitsAddend, index),
    isNegativeHits,
  };
}

function safeAddend(value: number, index: number): number {
  if (value > Number.MAX_SAFE_INTEGER) {
    throw badRequest(
      `descriptors[${index}].hits_addend must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`,
    );
  }
  return value;
}

function readRequest(r: ProtoReader, limits: RequestLimits): RateLimitRequest {
  let domain = '';
  const descriptors: RequestDescriptor[] = [];
  let hitsAddend = 0;
  while (!r.isDone) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) + WIRE_BYTES: {
        const end = boundedEnd(r, limits.maxKeyBytes);
        if (end < 0) throw tooMany.keyBytes(limits, 'domain');
        domain = r.utf8(end);
        break;
      }
      case (2 << 3) + WIRE_BYTES:
        if (descriptors.length >= limits.maxDescriptors) throw tooMany.descriptors(limits);
        descriptors.push(descriptorOf(r, descriptors.length, limits));
        break;
      case (3 << 3) + WIRE_VARINT:
        hitsAddend = uint32Field(r, 'hits_addend');
        break;
      default:
        r.skipField(tag);
    }
  }
  return { domain, descriptors, hitsAddend };
}

/**
 * The engine's request from RateLimitRequest bytes, read as protobuf-go reads them
 * (docs/wire-format.md). Throws RequestError when the bytes are not a RateLimitRequest, a
 * field is out of range, or the request is past `limits`, as requestFromJson does.
 */
export function decodeRateLimitRequest(
  buf: Buffer,
  start = 0,
  end = buf.length,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): RateLimitRequest {
  try {
    return readRequest(new ProtoReader(buf, start, end), limits);
  } catch (err: unknown) {
    if (err instanceof MalformedMessage)
      throw badRequest(`the request is not a RateLimitRequest: ${err.message}`);
    throw err;
  }
}

function writeStruct(w: ProtoWriter, object: JsonObject): void {
  for (const key of Object.keys(object)) {
    const entry = w.open(1);
    w.string(1, key);
    const value = w.open(2);
    writeValue(w, object[key] ?? null);
    w.close(value);
    w.close(entry);
  }
}

/** google.protobuf.Value: null_value=1, number_value=2, string_value=3, bool_value=4, struct_value=5, list_value=6. */
function writeValue(w: ProtoWriter, value: JsonValue): void {
  if (value === null) w.varint(1, 0);
  else if (typeof value === 'number') w.double(2, value);
  else if (typeof value === 'string') w.string(3, value);
  else if (typeof value === 'boolean') w.bool(4, value);
  else if (Array.isArray(value)) {
    const list = w.open(6);
    for (const item of value) {
      const v = w.open(1);
      writeValue(w, item);
      w.close(v);
    }
    w.close(list);
  } else {
    const struct = w.open(5);
    writeStruct(w, value);
    w.close(struct);
  }
}

function writeHeaders(
  w: ProtoWriter,
  field: number,
  headers: RateLimitResponse['responseHeadersToAdd'],
): void {
  for (const h of headers) {
    const at = w.open(field);
    if (h.key !== '') w.string(1, h.key);
    if (h.value !== '') w.string(2, h.value);
    w.close(at);
  }
}

/**
 * RateLimitResponse bytes for the engine's response. With `framed`, the five-byte gRPC
 * message header (uncompressed, length) comes first, so the result goes out as it is.
 */
export function encodeRateLimitResponse(response: RateLimitResponse, framed = false): Buffer {
  const w = new ProtoWriter(framed ? 5 : 0);
  w.varint(1, CODES[response.overallCode]);
  for (const s of response.statuses) {
    const status = w.open(2);
    w.varint(1, CODES[s.code]);
    const limit = s.currentLimit;
    if (limit !== undefined) {
      const at = w.open(2);
      if (limit.requestsPerUnit !== 0) w.varint(1, limit.requestsPerUnit);
      w.varint(2, RESPONSE_UNITS[limit.unit]);
      if (limit.name !== undefined && limit.name !== '') w.string(3, limit.name);
      w.close(at);
    }
    if (s.limitRemaining !== 0) w.varint(3, s.limitRemaining);
    if (s.durationUntilResetSeconds !== undefined) {
      const at = w.open(4);
      if (s.durationUntilResetSeconds !== 0) w.varint(1, s.durationUntilResetSeconds);
      w.close(at);
    }
    w.close(status);
  }
  writeHeaders(w, 3, response.responseHeadersToAdd);
  writeHeaders(w, 4, response.requestHeadersToAdd);
  if (response.dynamicMetadata !== undefined) {
    const at = w.open(6);
    writeStruct(w, response.dynamicMetadata);
    w.close(at);
  }
  const length = w.length;
  const out = w.finish();
  if (framed) {
    out[0] = 0;
    out.writeUInt32BE(length, 1);
  }
  return out;
}
