// The reliability rig's shared parts: its mode (short inside `npm test`, long by hand), the
// report every test adds its row to, latency percentiles, RSS of a process, and a gRPC load.
import { appendFileSync, readFileSync } from 'node:fs';
import type http2 from 'node:http2';
import { loadPackageDefinition } from '../../src/lib/proto';
import type { WireResponse } from '../helpers/grpc-client';
import { frame, rawCall, type RawAnswer } from '../helpers/h2-raw';

/** RELIABILITY_MODE=long (set by `npm run reliability -- --long`) runs the long variants. */
export const IS_LONG = process.env.RELIABILITY_MODE === 'long';

/** A value for each mode. */
export function byMode<T>(short: T, long: T): T {
  return IS_LONG ? long : short;
}

/** One row of docs/reliability.md: what was tried, what held, the figures, the command. */
export interface ReportRow {
  readonly test: string;
  readonly tried: string;
  readonly held: string;
  readonly figures: Readonly<Record<string, string | number>>;
}

/** Adds a row to the report file the runner reads (RELIABILITY_REPORT), when there is one. */
export function report(row: ReportRow): void {
  const file = process.env.RELIABILITY_REPORT;
  if (file === undefined || file === '') return;
  appendFileSync(file, `${JSON.stringify({ ...row, mode: IS_LONG ? 'long' : 'short' })}\n`);
}

/** Durations in milliseconds, for percentiles. */
export class Latencies {
  private readonly samples: number[] = [];

  add(ms: number): void {
    this.samples.push(ms);
  }

  get count(): number {
    return this.samples.length;
  }

  /** The q-th percentile (0..100), nearest rank; 0 when empty. */
  p(q: number): number {
    if (this.samples.length === 0) return 0;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const rank = Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1);
    return sorted[Math.max(0, rank)] ?? 0;
  }

  get max(): number {
    return this.samples.reduce((a, b) => Math.max(a, b), 0);
  }
}

/** Resident memory of a process in MiB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  if (match === null) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

/** Samples a process's RSS every `everyMs` until stopped; keeps the peak and the series. */
export class RssSampler {
  readonly series: { atMs: number; mb: number }[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    private readonly pid: number,
    everyMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => {
      this.sample();
    }, everyMs);
  }

  private sample(): void {
    try {
      this.series.push({ atMs: performance.now() - this.started, mb: rssMb(this.pid) });
    } catch {
      // The process is gone; the test that stopped it knows.
    }
  }

  get peakMb(): number {
    return this.series.reduce((a, s) => Math.max(a, s.mb), 0);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

const rls = (
  loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
    'envoy.service.ratelimit.v3.RateLimitService'
  ] as unknown as {
    ShouldRateLimit: {
      requestSerialize: (value: unknown) => Buffer;
      responseDeserialize: (bytes: Buffer) => WireResponse;
    };
  }
).ShouldRateLimit;
const serializer = rls.requestSerialize;

/** A RateLimitRequest in proto-loader's shape, encoded (unframed). */
export function encodeWireRequest(wire: unknown): Buffer {
  return serializer(wire);
}

/** A decision as both transports report it. */
export interface Decision {
  readonly overallCode: string;
  readonly statuses: readonly {
    readonly code: string;
    readonly remaining: number;
    readonly resetSeconds: number;
  }[];
}

/** The decision in a gRPC answer's body (one framed RateLimitResponse). */
export function grpcDecision(body: Buffer): Decision {
  const wire = rls.responseDeserialize(body.subarray(5));
  return {
    overallCode: wire.overallCode ?? 'UNKNOWN',
    statuses: (wire.statuses ?? []).map((s) => ({
      code: s.code ?? 'UNKNOWN',
      remaining: s.limitRemaining ?? 0,
      resetSeconds: s.durationUntilReset?.seconds ?? 0,
    })),
  };
}

/** The decision in a /json answer. */
export function jsonDecision(payload: unknown): Decision {
  const p = payload as {
    overallCode?: string;
    statuses?: { code?: string; limitRemaining?: number; durationUntilReset?: string }[];
  };
  return {
    overallCode: p.overallCode ?? 'UNKNOWN',
    statuses: (p.statuses ?? []).map((s) => ({
      code: s.code ?? 'UNKNOWN',
      remaining: s.limitRemaining ?? 0,
      resetSeconds: Number((s.durationUntilReset ?? '0s').replace(/s$/, '')),
    })),
  };
}

/** A descriptor of a rig request. */
export interface RigDescriptor {
  readonly entries: readonly (readonly [string, string])[];
  readonly hitsAddend?: number;
  readonly isNegativeHits?: boolean;
}

/** A framed gRPC RateLimitRequest. */
export function grpcRequest(domain: string, descriptors: readonly RigDescriptor[]): Buffer {
  return frame(
    serializer({
      domain,
      descriptors: descriptors.map((d) => ({
        entries: d.entries.map(([key, value]) => ({ key, value })),
        ...(d.hitsAddend === undefined ? {} : { hitsAddend: { value: d.hitsAddend } }),
        ...(d.isNegativeHits === true ? { isNegativeHits: true } : {}),
      })),
    }),
  );
}

/** The same request as a /json body. */
export function jsonRequest(domain: string, descriptors: readonly RigDescriptor[]): string {
  return JSON.stringify({
    domain,
    descriptors: descriptors.map((d) => ({
      entries: d.entries.map(([key, value]) => ({ key, value })),
      ...(d.hitsAddend === undefined ? {} : { hitsAddend: d.hitsAddend }),
      ...(d.isNegativeHits === true ? { isNegativeHits: true } : {}),
    })),
  });
}

/** One answered call of a load run. */
export interface CallResult {
  readonly startedMs: number;
  readonly answer: RawAnswer;
}

/**
 * Runs `concurrency` loops of gRPC calls over `sessions` until `until()` says stop (checked
 * before each call), each call built by `request(i)`; returns every result.
 */
export async function grpcLoad(options: {
  readonly sessions: readonly http2.ClientHttp2Session[];
  readonly concurrency: number;
  readonly request: (i: number) => Buffer;
  readonly until: () => boolean;
  readonly headers?: http2.OutgoingHttpHeaders;
  readonly onResult?: (result: CallResult) => void;
}): Promise<CallResult[]> {
  const results: CallResult[] = [];
  let next = 0;
  const loop = async (worker: number): Promise<void> => {
    while (!options.until()) {
      const i = next++;
      const session = options.sessions[worker % options.sessions.length];
      if (session === undefined || session.closed || session.destroyed) return;
      const startedMs = performance.now();
      const answer = await rawCall(session, options.request(i), options.headers ?? {});
      const result = { startedMs, answer };
      results.push(result);
      options.onResult?.(result);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, w) => loop(w)));
  return results;
}

/** Stops after `count` calls have been started. */
export function afterCalls(count: number): () => boolean {
  let started = 0;
  return () => started++ >= count;
}

/** Stops once `ms` have passed. */
export function afterMs(ms: number): () => boolean {
  const end = performance.now() + ms;
  return () => performance.now() >= end;
}

/** Rounds for a table cell. */
export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
