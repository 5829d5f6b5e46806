// Converts decoded protobuf objects to the engine's types and back, validating at the edge.
import { parseUnit, type JsonObject, type JsonValue, type LimitOverride } from '../../config';
import {
  type Code,
  type HeaderValue,
  type RateLimitRequest,
  type RateLimitResponse,
  type RequestDescriptor,
} from '../../engine';
import type {
  StructMessage,
  StructValue,
  WireDescriptor,
  WireRequest,
  WireResponse,
} from './messages';
import { overrideUnit, wholeNumber } from './request-rules';

const MAX_UINT32 = 4294967295;

function descriptorOf(wire: WireDescriptor, index: number): RequestDescriptor {
  const entries = (wire.entries ?? []).map((e) => ({ key: e.key ?? '', value: e.value ?? '' }));
  let limit: LimitOverride | undefined;
  if (wire.limit !== undefined && wire.limit !== null) {
    limit = {
      requestsPerUnit: wholeNumber(
        wire.limit.requestsPerUnit ?? 0,
        `descriptors[${index}].limit.requests_per_unit`,
        MAX_UINT32,
      ),
      unit: overrideUnit(wire.limit.unit, index),
    };
  }
  let hitsAddend: number | undefined;
  if (wire.hitsAddend !== undefined && wire.hitsAddend !== null) {
    hitsAddend = wholeNumber(
      wire.hitsAddend.value ?? 0,
      `descriptors[${index}].hits_addend`,
      Number.MAX_SAFE_INTEGER,
    );
  }
  return { entries, limit, hitsAddend, isNegativeHits: wire.isNegativeHits === true };
}

/** The engine's request from a decoded RateLimitRequest. Throws RequestError when malformed. */
export function requestFromWire(wire: WireRequest): RateLimitRequest {
  return {
    domain: wire.domain ?? '',
    descriptors: (wire.descriptors ?? []).map(descriptorOf),
    hitsAddend: wholeNumber(wire.hitsAddend ?? 0, 'hits_addend', MAX_UINT32),
  };
}

function structValue(value: JsonValue): StructValue {
  if (value === null) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(structValue) } };
  return { structValue: toStruct(value) };
}

/** google.protobuf.Struct from a JSON object. */
export function toStruct(object: JsonObject): StructMessage {
  const fields: Record<string, StructValue> = {};
  for (const [key, value] of Object.entries(object)) fields[key] = structValue(value);
  return { fields };
}

/** A RateLimitResponse object for the protobuf encoder. */
export function responseToWire(response: RateLimitResponse): WireResponse {
  const wire: WireResponse = {
    overallCode: response.overallCode,
    statuses: response.statuses.map((s) => ({
      code: s.code,
      ...(s.currentLimit === undefined
        ? {}
        : {
            currentLimit: {
              requestsPerUnit: s.currentLimit.requestsPerUnit,
              unit: s.currentLimit.unit,
              ...(s.currentLimit.name === undefined ? {} : { name: s.currentLimit.name }),
            },
          }),
      limitRemaining: s.limitRemaining,
      ...(s.durationUntilResetSeconds === undefined
        ? {}
        : { durationUntilReset: { seconds: s.durationUntilResetSeconds } }),
    })),
    responseHeadersToAdd: response.responseHeadersToAdd.map((h) => ({
      key: h.key,
      value: h.value,
    })),
    requestHeadersToAdd: response.requestHeadersToAdd.map((h) => ({ key: h.key, value: h.value })),
  };
  if (response.dynamicMetadata !== undefined)
    wire.dynamicMetadata = toStruct(response.dynamicMetadata);
  return wire;
}

function jsonValue(value: StructValue): JsonValue {
  if (value.structValue !== undefined) return fromStruct(value.structValue);
  if (value.listValue !== undefined) return value.listValue.values.map(jsonValue);
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.numberValue !== undefined) return value.numberValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return null;
}

/** A JSON object from google.protobuf.Struct. */
export function fromStruct(struct: StructMessage): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(struct.fields)) out[key] = jsonValue(value);
  return out;
}

function headersFromWire(
  headers: readonly Partial<HeaderValue>[] | undefined,
): readonly HeaderValue[] {
  return (headers ?? []).map((h) => ({ key: h.key ?? '', value: h.value ?? '' }));
}

function codeOf(code: string | undefined): Code {
  return code === 'OVER_LIMIT' ? 'OVER_LIMIT' : 'OK';
}

/** The engine's response type from a decoded RateLimitResponse, for clients and tests. */
export function responseFromWire(wire: Partial<WireResponse>): RateLimitResponse {
  return {
    overallCode: codeOf(wire.overallCode),
    statuses: (wire.statuses ?? []).map((s) => {
      const unit = s.currentLimit?.unit === undefined ? undefined : parseUnit(s.currentLimit.unit);
      return {
        code: codeOf(s.code),
        currentLimit:
          s.currentLimit === undefined || unit === undefined
            ? undefined
            : { requestsPerUnit: s.currentLimit.requestsPerUnit, unit, name: s.currentLimit.name },
        limitRemaining: s.limitRemaining ?? 0,
        // Decoded without defaults, a zero Duration is present but has no seconds field.
        durationUntilResetSeconds:
          s.durationUntilReset === undefined ? undefined : (s.durationUntilReset.seconds ?? 0),
      };
    }),
    responseHeadersToAdd: headersFromWire(wire.responseHeadersToAdd),
    requestHeadersToAdd: headersFromWire(wire.requestHeadersToAdd),
    dynamicMetadata:
      wire.dynamicMetadata === undefined ? undefined : fromStruct(wire.dynamicMetadata),
  };
}
