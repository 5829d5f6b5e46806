// The engine's request and response: domain types, free of protobuf.
import type { DescriptorQuery, JsonObject, Unit } from '../config';

/** One descriptor of a request. */
export interface RequestDescriptor extends DescriptorQuery {
  /** The descriptor's own hits_addend when set (0 included); undefined uses the request's. */
  readonly hitsAddend: number | undefined;
  /** Subtract the hits instead of adding them (a refund). */
  readonly isNegativeHits: boolean;
}

export interface RateLimitRequest {
  readonly domain: string;
  readonly descriptors: readonly RequestDescriptor[];
  /** Request-level hits; 0 means 1. */
  readonly hitsAddend: number;
}

export type Code = 'OK' | 'OVER_LIMIT';

export interface CurrentLimit {
  readonly requestsPerUnit: number;
  readonly unit: Unit;
  readonly name: string | undefined;
}

export interface DescriptorStatus {
  readonly code: Code;
  readonly currentLimit: CurrentLimit | undefined;
  readonly limitRemaining: number;
  /** Whole seconds until the window resets; undefined when no limit applies. */
  readonly durationUntilResetSeconds: number | undefined;
}

export interface HeaderValue {
  readonly key: string;
  readonly value: string;
}

export interface RateLimitResponse {
  readonly overallCode: Code;
  readonly statuses: readonly DescriptorStatus[];
  readonly responseHeadersToAdd: readonly HeaderValue[];
  readonly requestHeadersToAdd: readonly HeaderValue[];
  readonly dynamicMetadata: JsonObject | undefined;
}
