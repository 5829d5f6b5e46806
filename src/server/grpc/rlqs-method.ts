// envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas: one
// bidirectional stream per Envoy, its reports handed to the quota service, its assignments
// written back whenever the service has them, within bounds per connection and per stream.
import type { H2Connection, H2Stream, OutgoingHeaders } from '../h2';
import type { RequestTracer } from '../../tracing';
import type { LastResort } from '../last-resort';
import { BucketIdCache, decodeUsageReports } from '../wire/rlqs-reports';
import {
  encodeResponse,
  STREAM_RATE_LIMIT_QUOTAS,
  UndecodableReport,
  type BucketAction,
  type QuotaStatus,
  type QuotaStream,
  type QuotaStreamSink,
} from '../../quota';
import { MessageStream } from './message-stream';
import { ACCEPT_ENCODING, CallError, encodeStatusMessage, GrpcStatus } from './protocol';
import { sendStatus } from './replies';
import type { MethodHandler } from './router';
import { startTracedStream, type TracedStream } from './traced-call';

export { STREAM_RATE_LIMIT_QUOTAS };

/** What the method needs of the quota service. */
export interface QuotaStreams {
  openStream(sink: QuotaStreamSink, peer: string): QuotaStream;
}

export interface RlqsMethodOptions {
  readonly streams: QuotaStreams;
  readonly lastResort: LastResort;
  /** MAX_REQUEST_BYTES: one report. */
  readonly maxRequestBytes: number;
  /** RLQS_MAX_STREAMS_PER_CONNECTION. */
  readonly maxStreamsPerConnection: number;
  /** RLQS_MAX_BUCKET_ID_BYTES: a longer bucket id is refused before it is decoded. */
  readonly maxBucketIdBytes: number;
  /** A span per stream while TRACING_ENABLED is true. */
  readonly tracer?: RequestTracer | undefined;
}

const STATUS: Readonly<Record<QuotaStatus, GrpcStatus>> = {
  OK: GrpcStatus.OK,
  INVALID_ARGUMENT: GrpcStatus.INVALID_ARGUMENT,
  RESOURCE_EXHAUSTED: GrpcStatus.RESOURCE_EXHAUSTED,
  UNAVAILABLE: GrpcStatus.UNAVAILABLE,
  INTERNAL: GrpcStatus.INTERNAL,
};

const HEADERS: OutgoingHeaders = Object.freeze({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': ACCEPT_ENCODING,
});

/**
 * Responses wait while this many bytes of earlier ones wait for the client's flow control
 * window: a client that never reads holds at most this, plus one entry per bucket in the
 * quota service.
 */
const MAX_UNREAD_BYTES = 16 * 1024;

/**
 * Bucket ids a stream's decoder keeps (RLQS_MAX_BUCKETS_PER_STREAM's default): a stream that
 * reports more has the ones past it decoded every time.
 */
const CACHED_BUCKET_IDS = 10_000;

/**
 * What one usage of a report counts for against the connection's turn budget, beyond its frame
 * bytes: decoding it and handling it in the quota service costs about 2 µs, what reading 128
 * bytes of frames costs (a turn's 64 KiB take about a millisecond). A connection whose streams
 * report thousands of buckets at once is read a few hundred usages a turn, like frames.
 */
export const USAGE_WORK_BYTES = 128;

function peerOf(stream: H2Stream): string {
  const socket = (stream.session as { socket?: { remoteAddress?: string; remotePort?: number } })
    .socket;
  return socket?.remoteAddress === undefined
    ? 'unknown'
    : `${socket.remoteAddress}:${String(socket.remotePort)}`;
}

function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** The quota service's view of one H2 stream. */
class StreamSink implements QuotaStreamSink {
  private ending: { code: GrpcStatus; message: string } | undefined;

  constructor(private readonly stream: H2Stream) {}

  send(actions: readonly BucketAction[]): void {
    const { stream } = this;
    // A stream ended here has sent its headers: write() then refuses, and nothing goes out.
    if (stream.closed) return;
    if (!stream.headersSent) {
      stream.respond(HEADERS, { waitForTrailers: true });
      stream.once('wantTrailers', () => {
        const { code, message } = this.ending ?? { code: GrpcStatus.OK, message: '' };
        stream.sendTrailers({
          'grpc-status': String(code),
          ...(message === '' ? {} : { 'grpc-message': encodeStatusMessage(message) }),
        });
      });
    }
    stream.write(frame(encodeResponse(actions)));
  }

  end(status: QuotaStatus, message: string): void {
    const { stream } = this;
    if (stream.closed) return;
    if (!stream.headersSent) {
      sendStatus(stream, STATUS[status], message);
      return;
    }
    this.ending = { code: STATUS[status], message };
    stream.end();
  }

  canSend(): boolean {
    return this.stream.bufferedBytes < MAX_UNREAD_BYTES;
  }
}

/** The method, and the streams it serves (ended when their connection or the server closes). */
export class RlqsMethod {
  private readonly open = new Map<H2Stream, QuotaStream>();
  private readonly perConnection = new WeakMap<H2Connection, number>();

  constructor(private readonly options: RlqsMethodOptions) {}

  readonly handler: MethodHandler = (stream, headers, encoding) => {
    const { maxStreamsPerConnection, tracer } = this.options;
    const count = this.perConnection.get(stream.session) ?? 0;
    if (count >= maxStreamsPerConnection) {
      sendStatus(
        stream,
        GrpcStatus.RESOURCE_EXHAUSTED,
        `this connection has ${maxStreamsPerConnection} quota streams open already (RLQS_MAX_STREAMS_PER_CONNECTION)`,
      );
      return;
    }
    const traced = tracer && startTracedStream(tracer, stream, headers);
    this.perConnection.set(stream.session, count + 1);
    const quotaStream = this.options.streams.openStream(new StreamSink(stream), peerOf(stream));
    this.open.set(stream, quotaStream);
    const messages = new MessageStream(encoding, this.options.maxRequestBytes);
    const ids = new BucketIdCache(CACHED_BUCKET_IDS, this.options.maxBucketIdBytes, quotaStream);
    stream.on('data', (chunk: Buffer) => {
      this.received(quotaStream, messages, chunk, { ids, traced, session: stream.session });
      // Reports read are done with: a stream open for hours holds only its unfinished one.
      stream.keepOnly(messages.heldBytes);
    });
    stream.on('end', () => {
      if (messages.isCut) quotaStream.end('INVALID_ARGUMENT', 'the last message is cut short');
      else quotaStream.remoteEnded();
    });
    stream.once('close', () => {
      this.open.delete(stream);
      this.perConnection.set(stream.session, (this.perConnection.get(stream.session) ?? 1) - 1);
      quotaStream.closed();
      ids.clear();
    });
  };

  /** Ends the streams of a connection the server is closing (after its GOAWAY). */
  endStreamsOf(session: H2Connection): void {
    for (const [stream, quotaStream] of this.open)
      if (stream.session === session) quotaStream.end('UNAVAILABLE', 'the connection is closing');
  }

  /** Ends every stream: the server is shutting down (its GOAWAY is out). */
  close(): void {
    for (const quotaStream of this.open.values())
      quotaStream.end('UNAVAILABLE', 'the server is shutting down');
  }

  private received(
    quotaStream: QuotaStream,
    messages: MessageStream,
    chunk: Buffer,
    {
      ids,
      traced,
      session,
    }: { ids: BucketIdCache; traced: TracedStream | undefined; session: H2Connection },
  ): void {
    try {
      for (const message of messages.push(chunk)) {
        if (quotaStream.isEnded) return;
        const reports = decodeUsageReports(message.buf, message.start, message.end, ids);
        const usages = reports.bucketQuotaUsages?.length ?? 0;
        traced?.report(reports.domain, usages);
        quotaStream.receive(reports);
        session.chargeWork(usages * USAGE_WORK_BYTES);
      }
    } catch (err: unknown) {
      if (err instanceof CallError) this.fail(quotaStream, err.code, err.message);
      else if (err instanceof UndecodableReport) quotaStream.end('INVALID_ARGUMENT', err.message);
      else {
        this.options.lastResort.report(err, 'RLQS stream');
        quotaStream.end('INTERNAL', 'internal error');
      }
    }
  }

  /** A framing error: too large is RESOURCE_EXHAUSTED, the rest the protocol's INTERNAL. */
  private fail(quotaStream: QuotaStream, code: GrpcStatus, message: string): void {
    quotaStream.end(
      code === GrpcStatus.RESOURCE_EXHAUSTED ? 'RESOURCE_EXHAUSTED' : 'INTERNAL',
      message,
    );
  }
}
