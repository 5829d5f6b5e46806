// The request file of ratelimit-client -replay: one POST /json request body per line.
import { describeError } from '../lib/errors';
import type { RateLimitRequest } from '../engine';
import { requestFromJson, type WireDescriptor, type WireRequest } from '../server';

/** One request of the file, as read and as it goes on the wire. */
export interface ReplayRequest {
  /** Its line in the file, counted from 1, for the report. */
  readonly line: number;
  readonly request: RateLimitRequest;
  readonly wire: WireRequest;
}

/** The requests of a file, or every line that is wrong. */
export type ReplayFile =
  { readonly requests: readonly ReplayRequest[] } | { readonly errors: readonly string[] };

/** The domain request back in the shape the gRPC client encodes. */
function toWire(request: RateLimitRequest): WireRequest {
  const descriptors = request.descriptors.map((d): WireDescriptor => {
    const wire: WireDescriptor = {
      entries: d.entries.map((e) => ({ key: e.key, value: e.value })),
    };
    if (d.limit !== undefined)
      wire.limit = { requestsPerUnit: d.limit.requestsPerUnit, unit: d.limit.unit };
    if (d.hitsAddend !== undefined) wire.hitsAddend = { value: d.hitsAddend };
    if (d.isNegativeHits) wire.isNegativeHits = true;
    return wire;
  });
  return { domain: request.domain, descriptors, hitsAddend: request.hitsAddend };
}

/**
 * Reads a request file: each line a JSON object as POST /json takes it ({"domain", "descriptors":
 * [{"entries": [{"key", "value"}], "hits_addend"}], "hits_addend"}); blank lines and lines
 * starting with `#` are skipped. Every wrong line is reported, not only the first.
 */
export function parseReplayFile(text: string): ReplayFile {
  const requests: ReplayRequest[] = [];
  const errors: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const body = raw.trim();
    if (body === '' || body.startsWith('#')) return;
    try {
      const request = requestFromJson(body);
      requests.push({ line: i + 1, request, wire: toWire(request) });
    } catch (e: unknown) {
      errors.push(`line ${i + 1}: ${describeError(e)}`);
    }
  });
  if (errors.length > 0) return { errors };
  if (requests.length === 0) return { errors: ['the file holds no request'] };
  return { requests };
}
