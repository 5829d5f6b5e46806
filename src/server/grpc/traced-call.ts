// The server span of one gRPC call or RLQS stream, ended when the stream closes with the status
// it was sent.
import type { H2Headers, H2Stream } from '../h2';
import type { CallSpan, RequestTracer, StreamSpan } from '../../tracing';
import { GrpcStatus } from './protocol';

/** One traced call; the handler fills in what it learns for the span's attributes. */
export interface TracedCall {
  readonly span: CallSpan;
  domain?: string;
  overallCode?: string;
  error?: unknown;
}

/** The gRPC status name the stream was answered with; CANCELLED when it closed unanswered. */
function sentStatus(stream: H2Stream): string {
  const raw = stream.sentStatus;
  if (raw === undefined) return 'CANCELLED';
  const name: unknown = GrpcStatus[Number(raw)];
  return typeof name === 'string' ? name : 'UNKNOWN';
}

/**
 * Starts the call's span. Every way a call ends (an answer, a refusal while reading, the
 * client going away) closes the stream, so the span ends there, whatever path answered.
 */
export function startTracedCall(
  tracer: RequestTracer,
  stream: H2Stream,
  headers: H2Headers,
): TracedCall {
  const call: TracedCall = { span: tracer.startCall('grpc', headers) };
  stream.once('close', () => {
    const { domain, overallCode, error } = call;
    call.span.end({
      grpcStatus: sentStatus(stream),
      ...(domain === undefined ? {} : { domain }),
      ...(overallCode === undefined ? {} : { overallCode }),
      ...(error === undefined ? {} : { error }),
    });
  });
  return call;
}

/** One traced RLQS stream: its reports are events, its domain the first one reported. */
export class TracedStream {
  private domain: string | undefined;

  constructor(private readonly span: StreamSpan) {}

  report(domain: string | undefined, buckets: number): void {
    if (this.domain === undefined && domain !== undefined && domain !== '') this.domain = domain;
    this.span.report(this.domain ?? '', buckets);
  }

  /** Ends the span with the status the stream was answered with. */
  closed(stream: H2Stream): void {
    const { domain } = this;
    this.span.end({ grpcStatus: sentStatus(stream), ...(domain === undefined ? {} : { domain }) });
  }
}

/** Starts an RLQS stream's span, ended when the stream closes. */
export function startTracedStream(
  tracer: RequestTracer,
  stream: H2Stream,
  headers: H2Headers,
): TracedStream {
  const traced = new TracedStream(tracer.startStream(headers));
  stream.once('close', () => {
    traced.closed(stream);
  });
  return traced;
}
