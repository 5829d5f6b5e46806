// The tracing seam the front ends see: a server span per ShouldRateLimit call and per RLQS stream.
import type { IncomingHttpHeaders } from 'node:http';

/** How the call arrived: gRPC, or POST /json over HTTP. */
export type CallTransport = 'grpc' | 'http';

/** How a call ended, for the span's attributes and status. */
export interface CallOutcome {
  /** The gRPC status name of the answer (`OK`, `INVALID_ARGUMENT`, `UNAVAILABLE`...). */
  readonly grpcStatus: string;
  /** The HTTP status of a /json answer. */
  readonly httpStatus?: number;
  /** The request's domain, once the request was read. */
  readonly domain?: string;
  /** OK or OVER_LIMIT when a decision was made. */
  readonly overallCode?: string;
  /** What went wrong, recorded on the span as an exception. */
  readonly error?: unknown;
}

/** The span of one call. */
export interface CallSpan {
  /** Runs `work` with this span as the current one, so backend spans become its children. */
  within<T>(work: () => T): T;
  /** Ends the span; the status is ERROR for the outcomes the conventions count as the server's fault. */
  end(outcome: CallOutcome): void;
}

/** The span of one RLQS stream, open as long as the stream. */
export interface StreamSpan {
  /** A usage report arrived: an event with its domain and bucket count. */
  report(domain: string, buckets: number): void;
  /** Ends the span with the status the stream ended with. */
  end(outcome: CallOutcome): void;
}

/**
 * Starts server spans. Front ends hold one only while TRACING_ENABLED is true: with tracing
 * off they hold undefined and do nothing per call.
 */
export interface RequestTracer {
  /**
   * A server span for one call, joining the caller's trace when its headers (gRPC metadata or
   * HTTP headers) carry a W3C `traceparent`.
   */
  startCall(transport: CallTransport, headers: IncomingHttpHeaders): CallSpan;
  /** A server span for one StreamRateLimitQuotas stream, joining the caller's trace likewise. */
  startStream(headers: IncomingHttpHeaders): StreamSpan;
}
