// The proto3 JSON mapping of RateLimitRequest and RateLimitResponse for POST /json.
import { describeError } from '../../lib/errors';
import type { JsonObject } from '../../config';
import type { RateLimitRequest, RateLimitResponse } from '../../engine';
import { requestFromWire } from './convert';
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from '../../settings';
import { badRequest, checkRequestLimits } from './request-rules';
import type { WireDescriptor, WireEntry, WireRequest } from './messages';

type Fields = Readonly<Record<string, string>>;

/** Accepted JSON names (lowerCamelCase and the proto names, as proto3 JSON parsers accept). */
const REQUEST_FIELDS: Fields = {
  domain: 'domain',
  descriptors: 'descriptors',
  hitsAddend: 'hitsAddend',
  hits_addend: 'hitsAddend',
};
const DESCRIPTOR_FIELDS: Fields = {
  entries: 'entries',
  limit: 'limit',
  hitsAddend: 'hitsAddend',
  hits_addend: 'hitsAddend',
  isNegativeHits: 'isNegativeHits',
  is_negative_hits: 'isNegativeHits',
};
const ENTRY_FIELDS: Fields = { key: 'key', value: 'value' };
const LIMIT_FIELDS: Fields = {
  requestsPerUnit: 'requestsPerUnit',
  requests_per_unit: 'requestsPerUnit',
  unit: 'unit',
};

/** Renames known fields and refuses unknown ones, as proto3 JSON parsing does. */
function fields(value: unknown, names: Fields, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw badRequest(`${path} must be a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value as Record<string, unknown>)) {
    const canonical = names[name];
    if (canonical === undefined) throw badRequest(`${path} has an unknown field "${name}"`);
    if (inner !== null) out[canonical] = inner;
  }
  return out;
}

function str(value: unknown, path: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${path} must be a string`);
  return value;
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw badRequest(`${path} must be a JSON array`);
  return value;
}

function num(value: unknown, path: string): number | string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string')
    throw badRequest(`${path} must be a number`);
  return value;
}

function entryOf(value: unknown, path: string): WireEntry {
  const f = fields(value, ENTRY_FIELDS, path);
  return { key: str(f.key, `${path}.key`) ?? '', value: str(f.value, `${path}.value`) ?? '' };
}

function descriptorOf(value: unknown, path: string): WireDescriptor {
  const f = fields(value, DESCRIPTOR_FIELDS, path);
  const out: WireDescriptor = {
    entries: list(f.entries, `${path}.entries`).map((e, i) => entryOf(e, `${path}.entries[${i}]`)),
  };
  if (f.limit !== undefined) {
    const l = fields(f.limit, LIMIT_FIELDS, `${path}.limit`);
    const unit = l.unit;
    if (unit !== undefined && typeof unit !== 'string' && typeof unit !== 'number') {
      throw badRequest(`${path}.limit.unit must be a unit name`);
    }
    const rpu = num(l.requestsPerUnit, `${path}.limit.requestsPerUnit`);
    out.limit = { requestsPerUnit: rpu === undefined ? 0 : Number(rpu), unit: unit ?? null };
  }
  if (f.hitsAddend !== undefined)
    out.hitsAddend = { value: num(f.hitsAddend, `${path}.hitsAddend`) ?? null };
  if (f.isNegativeHits !== undefined) {
    if (typeof f.isNegativeHits !== 'boolean')
      throw badRequest(`${path}.isNegativeHits must be true or false`);
    out.isNegativeHits = f.isNegativeHits;
  }
  return out;
}

/**
 * Parses a /json body. Throws RequestError('BAD_REQUEST') saying what is wrong, also for a
 * request past `limits`.
 */
export function requestFromJson(
  body: string,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): RateLimitRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (err: unknown) {
    throw badRequest(`the body is not valid JSON: ${describeError(err)}`);
  }
  const f = fields(parsed, REQUEST_FIELDS, 'the request');
  const hits = num(f.hitsAddend, 'hitsAddend');
  const wire: WireRequest = {
    domain: str(f.domain, 'domain') ?? '',
    descriptors: list(f.descriptors, 'descriptors').map((d, i) =>
      descriptorOf(d, `descriptors[${i}]`),
    ),
    hitsAddend:
      hits === undefined
        ? 0
        : typeof hits === 'string' && /^\d+$/.test(hits)
          ? Number(hits)
          : (hits as number),
  };
  const request = requestFromWire(wire);
  checkRequestLimits(request, limits);
  return request;
}

/** The proto3 JSON of a response: lowerCamelCase names, enum names, zero values left out. */
export function responseToJson(response: RateLimitResponse): JsonObject {
  const out: JsonObject = {};
  out.overallCode = response.overallCode;
  out.statuses = response.statuses.map((s) => {
    const status: JsonObject = { code: s.code };
    if (s.currentLimit !== undefined) {
      const limit: JsonObject = {
        requestsPerUnit: s.currentLimit.requestsPerUnit,
        unit: s.currentLimit.unit,
      };
      if (s.currentLimit.name !== undefined && s.currentLimit.name !== '')
        limit.name = s.currentLimit.name;
      if (s.currentLimit.requestsPerUnit === 0) delete limit.requestsPerUnit;
      status.currentLimit = limit;
    }
    if (s.limitRemaining !== 0) status.limitRemaining = s.limitRemaining;
    if (s.durationUntilResetSeconds !== undefined)
      status.durationUntilReset = `${s.durationUntilResetSeconds}s`;
    return status;
  });
  if (response.responseHeadersToAdd.length > 0) {
    out.responseHeadersToAdd = response.responseHeadersToAdd.map((h) => ({
      key: h.key,
      value: h.value,
    }));
  }
  if (response.requestHeadersToAdd.length > 0) {
    out.requestHeadersToAdd = response.requestHeadersToAdd.map((h) => ({
      key: h.key,
      value: h.value,
    }));
  }
  if (response.dynamicMetadata !== undefined) out.dynamicMetadata = response.dynamicMetadata;
  return out;
}
