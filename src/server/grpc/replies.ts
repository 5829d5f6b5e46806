// Answers on an HTTP/2 stream in gRPC form: a message with status OK, a status alone, a stream.
import type { H2Stream, OutgoingHeaders } from '../h2';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { toEdgeError } from '../errors';
import type { LastResort } from '../last-resort';
import { ACCEPT_ENCODING, CallError, encodeStatusMessage, GrpcStatus } from './protocol';

// Shared and frozen: the HTTP/2 layer encodes a frozen header object once and reuses its block.
const RESPONSE_HEADERS: OutgoingHeaders = Object.freeze({
  ':status': 200,
  'content-type': 'application/grpc',
  'grpc-accept-encoding': ACCEPT_ENCODING,
});
const OK_TRAILERS: OutgoingHeaders = Object.freeze({ 'grpc-status': '0' });
// No Date header: gRPC has no use for it and the reference's (Go) server sends none.
const WAIT_FOR_TRAILERS = Object.freeze({ waitForTrailers: true });
export const END_STREAM = Object.freeze({ endStream: true });

function sendTrailers(this: H2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/** Answers a call with a status and no message (a trailers-only response). */
export function sendStatus(stream: H2Stream, code: GrpcStatus, message: string): void {
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc',
      'grpc-accept-encoding': ACCEPT_ENCODING,
      'grpc-status': String(code),
      'grpc-message': encodeStatusMessage(message),
    },
    END_STREAM,
  );
}

/** Sends the response headers of a call whose messages follow; status OK once it ends. */
export function openResponse(stream: H2Stream): void {
  stream.respond(RESPONSE_HEADERS, WAIT_FOR_TRAILERS);
  // 'wantTrailers' comes once per stream: on() spares the wrapper once() allocates per call.
  stream.on('wantTrailers', sendTrailers);
}

/** Answers a unary call with one framed message and status OK. */
export function sendMessage(stream: H2Stream, framed: Buffer): void {
  // Already answered (its deadline passed) or gone: the late answer is dropped.
  if (stream.destroyed || stream.closed || stream.headersSent) return;
  openResponse(stream);
  stream.end(framed);
}

/**
 * Ends a call that failed: protocol errors with their own status, the rest through the edge's
 * error table. A backend error is logged at debug level only (the store tells its outages); an
 * error of no known kind is the last resort's.
 */
export function failCall(
  stream: H2Stream,
  err: unknown,
  report: { readonly logger: Logger; readonly lastResort: LastResort },
): void {
  if (err instanceof CallError) {
    sendStatus(stream, err.code, err.message);
    return;
  }
  const edge = toEdgeError(err);
  if (edge.kind === 'internal') report.lastResort.report(err, 'gRPC call');
  // The store logs its outages a few lines each; one line per failed call would flood.
  else if (edge.kind === 'backend')
    report.logger.debug('rate limit request failed', { error: describeError(err) });
  sendStatus(stream, edge.grpcCode, edge.message);
}

/**
 * The last resort on a call's path: `err` (thrown where nothing expected it) is logged and
 * counted, and the call answered INTERNAL. Inline try/catch with this, rather than
 * LastResort.guard, keeps the hot path free of two closures per call.
 */
export function answerInternal(
  stream: H2Stream,
  err: unknown,
  lastResort: LastResort,
  where: string,
): void {
  lastResort.report(err, where);
  try {
    sendStatus(stream, GrpcStatus.INTERNAL, 'internal error');
  } catch (answerErr: unknown) {
    lastResort.report(answerErr, `${where} (answering)`);
  }
}
