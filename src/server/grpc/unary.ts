// Reading the one request message of a unary call (or of a server-streaming call's request),
// within MAX_REQUEST_BYTES and HEADER_TIMEOUT, and within what one connection may buffer.
import type http2 from 'node:http2';
import type { Logger } from '../../lib/logger';
import type { LastResort } from '../last-resort';
import {
  CallError,
  GrpcStatus,
  messageTooLarge,
  singleMessage,
  uncompressed,
  type FramedMessage,
} from './protocol';
import { answerInternal, failCall } from './replies';
import type { TimeoutQueue } from './timeout-queue';

/** What reading a request needs: its limits, and where to report what goes wrong. */
export interface UnaryReading {
  readonly logger: Logger;
  readonly lastResort: LastResort;
  /** MAX_REQUEST_BYTES: one message, before and after decompression. */
  readonly maxRequestBytes: number;
  /** HEADER_TIMEOUT: the whole request must have arrived by then. */
  readonly headerTimeoutMs: number;
  /** The server's queue of bodies still arriving, HEADER_TIMEOUT each. */
  readonly bodyTimeouts: TimeoutQueue;
}

/**
 * The unfinished request bodies of one connection may hold this many messages' worth
 * together: a client that opens many streams and never finishes them is refused, while a
 * connection's ordinary requests (complete in a frame or two) never come near it.
 */
const BUFFERED_MESSAGES_PER_CONNECTION = 4;

/** Bytes of unfinished request bodies held per connection. */
const bufferedBySession = new WeakMap<http2.Http2Session, number>();

function buffered(session: http2.Http2Session | undefined, change: number): number {
  if (session === undefined) return 0;
  const now = (bufferedBySession.get(session) ?? 0) + change;
  bufferedBySession.set(session, now);
  return now;
}

function bodyTooSlow(reading: UnaryReading): CallError {
  return new CallError(
    GrpcStatus.DEADLINE_EXCEEDED,
    `the request did not arrive in full within HEADER_TIMEOUT (${reading.headerTimeoutMs} ms)`,
  );
}

function connectionFull(connectionCap: number): CallError {
  return new CallError(
    GrpcStatus.RESOURCE_EXHAUSTED,
    `this connection's unfinished requests hold more than ${connectionCap} bytes`,
  );
}

/**
 * Reads a request body, refusing one larger than a message may be or slower than allowed.
 * Exactly one of the three callbacks runs, `onClosed` when the stream closes first.
 */
function readBody(
  stream: http2.ServerHttp2Stream,
  reading: UnaryReading,
  onBody: (body: Buffer) => void,
  onError: (err: CallError) => void,
  onClosed: (() => void) | undefined,
): void {
  const session = stream.session;
  const connectionCap = reading.maxRequestBytes * BUFFERED_MESSAGES_PER_CONNECTION;
  let first: Buffer | undefined;
  let rest: Buffer[] | undefined;
  let size = 0;
  /** What this stream added to its connection's count. */
  let held = 0;
  let isSettled = false;
  const settle = (): void => {
    isSettled = true;
    reading.bodyTimeouts.remove(timeout);
    if (held > 0) buffered(session, -held);
    held = 0;
  };
  const refuse = (err: CallError): void => {
    settle();
    first = undefined;
    rest = undefined;
    onError(err);
  };
  const timeout = reading.bodyTimeouts.add(() => {
    if (isSettled) return;
    refuse(bodyTooSlow(reading));
    stream.close();
  });
  stream.on('data', (chunk: Buffer) => {
    if (isSettled) return;
    size += chunk.length;
    if (size > reading.maxRequestBytes + 5) {
      refuse(messageTooLarge(reading.maxRequestBytes));
      return;
    }
    held += chunk.length;
    if (buffered(session, chunk.length) > connectionCap) {
      refuse(connectionFull(connectionCap));
      return;
    }
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
  });
  stream.on('end', () => {
    if (isSettled) return;
    const body = rest !== undefined ? Buffer.concat(rest, size) : (first ?? Buffer.alloc(0));
    settle();
    onBody(body);
  });
  stream.on('close', () => {
    if (isSettled) return;
    settle();
    onClosed?.();
  });
}

/**
 * Reads the one request message of a call, decompressed, and hands it over; a body that is
 * not exactly one message ends the call with the protocol's status. An exception `handle`
 * throws is the last resort's: logged, counted, the call answered INTERNAL. `onUnread` runs
 * instead of `handle` when the call ends without a message: refused while reading, or its
 * client gone first.
 */
export function readUnary(
  stream: http2.ServerHttp2Stream,
  encoding: string | undefined,
  reading: UnaryReading,
  handle: (message: FramedMessage) => void,
  onUnread?: () => void,
): void {
  const { lastResort, maxRequestBytes } = reading;
  readBody(
    stream,
    reading,
    (body) => {
      let message: FramedMessage;
      try {
        message = uncompressed(singleMessage(body, maxRequestBytes), encoding, maxRequestBytes);
      } catch (err: unknown) {
        onUnread?.();
        failCall(stream, err, reading);
        return;
      }
      try {
        handle(message);
      } catch (err: unknown) {
        answerInternal(stream, err, lastResort, 'gRPC call');
      }
    },
    (err) => {
      onUnread?.();
      failCall(stream, err, reading);
    },
    onUnread,
  );
}
