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
import type { RefusalReason, Refusals } from '../refusals';
import { sendStatus } from './replies';
import type { MethodHandler } from './router';
import { TimeoutQueue, type Waiting } from './timeout-queue';
import { startTracedStream, type TracedStream } from './traced-call';
import type { UnsentBytes } from './unsent-bytes';

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
  /** MESSAGE_TIMEOUT: a report begun must be whole within it. */
  readonly messageTimeoutMs: number;
  /** RLQS_FIRST_MESSAGE_TIMEOUT: a stream's first report must be whole within it. */
  readonly firstMessageTimeoutMs: number;
  /** The bound on what waits for clients that do not read (GRPC_MAX_UNSENT_BYTES*). */
  readonly unsent: UnsentBytes;
  /** Where streams ended for the deadlines above are counted and logged. */
  readonly refusals: Refusals;
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
  /** What was due and refused for a connection not reading is sent once it drains. */
  retry: () => void = () => undefined;

  constructor(
    private readonly stream: H2Stream,
    private readonly unsent: UnsentBytes,
  ) {}

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
    this.unsent.wrote(stream.session);
  }

  end(status: QuotaStatus, message: string): void {
    this.endWith(STATUS[status], message);
  }

  /** Ends the stream with any gRPC status (the quota service's statuses are a few of them). */
  endWith(code: GrpcStatus, message: string): void {
    const { stream } = this;
    if (stream.closed) return;
    if (!stream.headersSent) {
      sendStatus(stream, code, message);
      return;
    }
    this.ending = { code, message };
    stream.end();
  }

  /**
   * Flow control windows say what the client may be sent; its socket says what it reads. A
   * connection past its unsent bound is written nothing the server starts until it drains:
   * the quota stream keeps what is due, one entry per bucket, and what is sent then is the
   * newest assignment of each.
   */
  canSend(): boolean {
    const { stream } = this;
    return (
      stream.bufferedBytes < MAX_UNREAD_BYTES && this.unsent.mayWrite(stream.session, this.retry)
    );
  }
}

/** One of a stream's deadlines, as an entry of its queue. */
class ReportWait implements Waiting {
  dueMs = 0;
  queuedAt = -1;

  constructor(readonly read: ReportsRead) {}
}

/**
 * One stream's reports being read, and its two deadlines: the first report's
 * (RLQS_FIRST_MESSAGE_TIMEOUT from the opening) until one is whole, and, while a report is
 * partly in, that report's (MESSAGE_TIMEOUT from the chunk that began it).
 */
class ReportsRead {
  readonly first = new ReportWait(this);
  readonly part = new ReportWait(this);
  /** A whole report has come: the first report's deadline is met. */
  hasReport = false;

  constructor(
    readonly stream: H2Stream,
    readonly quotaStream: QuotaStream,
    readonly sink: StreamSink,
    readonly messages: MessageStream,
  ) {}
}

/** The method, and the streams it serves (ended when their connection or the server closes). */
export class RlqsMethod {
  private readonly open = new Map<H2Stream, QuotaStream>();
  private readonly perConnection = new WeakMap<H2Connection, number>();
  /** Streams whose first report is not yet whole; one length each, so one timer each. */
  private readonly firstReports: TimeoutQueue<ReportWait>;
  private readonly partReports: TimeoutQueue<ReportWait>;

  constructor(private readonly options: RlqsMethodOptions) {
    this.firstReports = new TimeoutQueue(options.firstMessageTimeoutMs, (wait) => {
      this.expire(wait.read, 'first_message_deadline');
    });
    this.partReports = new TimeoutQueue(options.messageTimeoutMs, (wait) => {
      this.expire(wait.read, 'message_deadline');
    });
  }

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
    const sink = new StreamSink(stream, this.options.unsent);
    const quotaStream = this.options.streams.openStream(sink, peerOf(stream));
    sink.retry = () => {
      quotaStream.flush();
    };
    this.open.set(stream, quotaStream);
    const messages = new MessageStream(encoding, this.options.maxRequestBytes);
    const read = new ReportsRead(stream, quotaStream, sink, messages);
    this.firstReports.add(read.first);
    const ids = new BucketIdCache(CACHED_BUCKET_IDS, this.options.maxBucketIdBytes, quotaStream);
    stream.on('data', (chunk: Buffer) => {
      if (quotaStream.isEnded) return;
      const count = this.received(quotaStream, messages, chunk, {
        ids,
        traced,
        session: stream.session,
      });
      this.rearm(read, count);
      // Reports read are done with: a stream open for hours holds only its unfinished one.
      stream.keepOnly(messages.heldBytes);
    });
    stream.on('end', () => {
      this.settle(read);
      if (messages.isCut) quotaStream.end('INVALID_ARGUMENT', 'the last message is cut short');
      else quotaStream.remoteEnded();
    });
    stream.once('close', () => {
      this.settle(read);
      messages.release();
      this.open.delete(stream);
      this.perConnection.set(stream.session, (this.perConnection.get(stream.session) ?? 1) - 1);
      quotaStream.closed();
      ids.clear();
    });
  };

  /**
   * The deadlines after a chunk that completed `count` reports: the first report's is met by
   * one; a report left partly in has its own, from the chunk that began it (a first report
   * partly in has both, and the earlier ends the stream).
   */
  private rearm(read: ReportsRead, count: number): void {
    if (count > 0 && !read.hasReport) {
      read.hasReport = true;
      this.firstReports.remove(read.first);
    }
    const { part } = read;
    if (!read.messages.isCut) {
      if (part.queuedAt >= 0) this.partReports.remove(part);
    } else if (count > 0 || part.queuedAt < 0) {
      this.partReports.remove(part);
      this.partReports.add(part);
    }
  }

  /** Out of the deadline queues. */
  private settle(read: ReportsRead): void {
    this.firstReports.remove(read.first);
    this.partReports.remove(read.part);
  }

  /** A deadline passed: the stream ends DEADLINE_EXCEEDED and lets its bytes go. */
  private expire(read: ReportsRead, reason: RefusalReason): void {
    const { stream, quotaStream, sink, messages } = read;
    if (quotaStream.isEnded || stream.closed) return;
    const message =
      reason === 'first_message_deadline'
        ? `no whole report within RLQS_FIRST_MESSAGE_TIMEOUT (${String(this.options.firstMessageTimeoutMs)} ms) of the stream's opening`
        : `a report begun was not whole within MESSAGE_TIMEOUT (${String(this.options.messageTimeoutMs)} ms)`;
    this.options.refusals.note(reason, `an RLQS stream was ended: ${message}`, peerOf(stream));
    messages.release();
    stream.keepOnly(0);
    quotaStream.closed();
    sink.endWith(GrpcStatus.DEADLINE_EXCEEDED, message);
  }

  /** Ends the streams of a connection the server is closing (after its GOAWAY). */
  endStreamsOf(session: H2Connection): void {
    for (const [stream, quotaStream] of this.open)
      if (stream.session === session) quotaStream.end('UNAVAILABLE', 'the connection is closing');
  }

  /** Ends every stream: the server is shutting down (its GOAWAY is out). */
  close(): void {
    for (const quotaStream of this.open.values())
      quotaStream.end('UNAVAILABLE', 'the server is shutting down');
    this.firstReports.clear();
    this.partReports.clear();
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
  ): number {
    let count = 0;
    try {
      for (const message of messages.push(chunk)) {
        count += 1;
        if (quotaStream.isEnded) return count;
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
    return count;
  }

  /** A framing error: too large is RESOURCE_EXHAUSTED, the rest the protocol's INTERNAL. */
  private fail(quotaStream: QuotaStream, code: GrpcStatus, message: string): void {
    quotaStream.end(
      code === GrpcStatus.RESOURCE_EXHAUSTED ? 'RESOURCE_EXHAUSTED' : 'INTERNAL',
      message,
    );
  }
}
