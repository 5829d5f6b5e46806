// One request shape sent over gRPC or HTTP /json, and the answers of both read the same way.
import { fromStruct, type StructMessage } from '../../src/server';
import { RlsClient, type WireResponse } from './grpc-client';

export interface Descriptor {
  readonly entries: readonly (readonly [string, string])[];
  readonly hitsAddend?: number;
  readonly isNegativeHits?: boolean;
  readonly limit?: { readonly requestsPerUnit: number; readonly unit: string };
}

export interface Request {
  readonly domain: string;
  readonly descriptors: readonly Descriptor[];
  readonly hitsAddend?: number;
}

export interface Status {
  readonly code: string;
  readonly remaining: number;
  readonly rpu: number | undefined;
  readonly unit: string | undefined;
  readonly name: string | undefined;
  readonly reset: number | undefined;
}

export interface Answer {
  readonly overallCode: string;
  readonly statuses: readonly Status[];
  readonly responseHeaders: readonly (readonly [string, string])[];
  readonly requestHeaders: readonly (readonly [string, string])[];
  readonly dynamicMetadata: unknown;
}

/** A refused call: the gRPC status name or the HTTP status, and the message. */
export interface Failure {
  readonly status: string;
  readonly message: string;
}

export interface Transport {
  readonly name: 'grpc' | 'http';
  send(request: Request): Promise<Answer>;
  failure(request: Request): Promise<Failure>;
  close(): void;
}

function grpcRequest(request: Request): unknown {
  return {
    domain: request.domain,
    hitsAddend: request.hitsAddend ?? 0,
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries.map(([key, value]) => ({ key, value })),
      ...(d.hitsAddend === undefined ? {} : { hitsAddend: { value: d.hitsAddend } }),
      ...(d.isNegativeHits === true ? { isNegativeHits: true } : {}),
      ...(d.limit === undefined ? {} : { limit: d.limit }),
    })),
  };
}

function jsonRequest(request: Request): unknown {
  return {
    domain: request.domain,
    ...(request.hitsAddend === undefined ? {} : { hitsAddend: request.hitsAddend }),
    descriptors: request.descriptors.map((d) => ({
      entries: d.entries.map(([key, value]) => ({ key, value })),
      ...(d.hitsAddend === undefined ? {} : { hitsAddend: d.hitsAddend }),
      ...(d.isNegativeHits === true ? { isNegativeHits: true } : {}),
      ...(d.limit === undefined ? {} : { limit: d.limit }),
    })),
  };
}

function fromGrpc(res: WireResponse): Answer {
  return {
    overallCode: res.overallCode ?? 'UNKNOWN',
    statuses: (res.statuses ?? []).map((s) => ({
      code: s.code ?? 'UNKNOWN',
      remaining: s.limitRemaining ?? 0,
      rpu: s.currentLimit === undefined ? undefined : (s.currentLimit.requestsPerUnit ?? 0),
      unit: s.currentLimit?.unit,
      name: s.currentLimit?.name,
      reset: s.durationUntilReset === undefined ? undefined : (s.durationUntilReset.seconds ?? 0),
    })),
    responseHeaders: (res.responseHeadersToAdd ?? []).map((h) => [h.key, h.value] as const),
    requestHeaders: (res.requestHeadersToAdd ?? []).map((h) => [h.key, h.value] as const),
    dynamicMetadata:
      res.dynamicMetadata === undefined
        ? undefined
        : fromStruct(res.dynamicMetadata as StructMessage),
  };
}

interface JsonStatus {
  code: string;
  currentLimit?: { requestsPerUnit?: number; unit: string; name?: string };
  limitRemaining?: number;
  durationUntilReset?: string;
}

interface JsonAnswer {
  overallCode: string;
  statuses?: JsonStatus[];
  responseHeadersToAdd?: { key: string; value: string }[];
  requestHeadersToAdd?: { key: string; value: string }[];
  dynamicMetadata?: unknown;
}

function fromJson(res: JsonAnswer): Answer {
  return {
    overallCode: res.overallCode,
    statuses: (res.statuses ?? []).map((s) => ({
      code: s.code,
      remaining: s.limitRemaining ?? 0,
      rpu: s.currentLimit === undefined ? undefined : (s.currentLimit.requestsPerUnit ?? 0),
      unit: s.currentLimit?.unit,
      name: s.currentLimit?.name,
      reset:
        s.durationUntilReset === undefined
          ? undefined
          : Number(s.durationUntilReset.replace(/s$/, '')),
    })),
    responseHeaders: (res.responseHeadersToAdd ?? []).map((h) => [h.key, h.value] as const),
    requestHeaders: (res.requestHeadersToAdd ?? []).map((h) => [h.key, h.value] as const),
    dynamicMetadata: res.dynamicMetadata,
  };
}

const GRPC_STATUS_NAMES: Readonly<Record<number, string>> = {
  3: 'INVALID_ARGUMENT',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
};

export function grpcTransport(port: number): Transport {
  const client = new RlsClient(`127.0.0.1:${port}`);
  return {
    name: 'grpc',
    send: async (request) => fromGrpc(await client.shouldRateLimit(grpcRequest(request))),
    failure: async (request) => {
      const err = await client.error(grpcRequest(request));
      return { status: GRPC_STATUS_NAMES[err.code] ?? String(err.code), message: err.details };
    },
    close: () => {
      client.close();
    },
  };
}

export function httpTransport(port: number): Transport {
  const post = (request: Request): Promise<Response> =>
    fetch(`http://127.0.0.1:${port}/json`, {
      method: 'POST',
      body: JSON.stringify(jsonRequest(request)),
    });
  return {
    name: 'http',
    send: async (request) => {
      const res = await post(request);
      const body = (await res.json()) as JsonAnswer;
      const expected = body.overallCode === 'OVER_LIMIT' ? 429 : 200;
      if (res.status !== expected)
        throw new Error(`HTTP ${res.status} for ${body.overallCode}: ${JSON.stringify(body)}`);
      return fromJson(body);
    },
    failure: async (request) => {
      const res = await post(request);
      const body = (await res.json()) as { message: string };
      return { status: String(res.status), message: body.message };
    },
    close: () => undefined,
  };
}

/** A request of one domain from descriptors given as `[key, value]` pair lists. */
export function req(
  domain: string,
  descriptors: (readonly (readonly [string, string])[])[],
  hitsAddend?: number,
): Request {
  return {
    domain,
    descriptors: descriptors.map((entries) => ({ entries })),
    ...(hitsAddend === undefined ? {} : { hitsAddend }),
  };
}
