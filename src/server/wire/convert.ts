// Decoded protobuf objects (proto-loader's shapes) into the engine's types, validated at the edge.
import { parseUnit, type LimitOverride } from '../../config';
import type {
  Code,
  HeaderValue,
  RateLimitRequest,
  RateLimitResponse,
  RequestDescriptor,
} from '../../engine';
import { fromStruct } from '../../lib/struct';
import { MAX_UINT32 } from '../../lib/uint32';
import type { WireDescriptor, WireRequest, WireResponse } from './messages';
import { overrideUnit, wholeNumber } from './request-rules';

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
