// Reading the one request message of a unary call (or of a server-streaming call's request).
import type http2 from 'node:http2';
import type { Logger } from '../../lib/logger';
import {
  CallError,
  GrpcStatus,
  MAX_RECEIVE_MESSAGE_BYTES,
  singleMessage,
  uncompressed,
  type FramedMessage,
} from './protocol';
import { failCall } from './replies';

/** Reads a request body, refusing one larger than a message may be. */
function readBody(
  stream: http2.ServerHttp2Stream,
  onBody: (body: Buffer) => void,
  onError: (err: CallError) => void,
): void {
  let first: Buffer | undefined;
  let rest: Buffer[] | undefined;
  let size = 0;
  let isRefused = false;
  stream.on('data', (chunk: Buffer) => {
    if (isRefused) return;
    size += chunk.length;
    if (size > MAX_RECEIVE_MESSAGE_BYTES + 5) {
      isRefused = true;
      onError(
        new CallError(
          GrpcStatus.RESOURCE_EXHAUSTED,
          `the request is larger than the ${MAX_RECEIVE_MESSAGE_BYTES} bytes a message may have`,
        ),
      );
      return;
    }
    if (first === undefined) first = chunk;
    else (rest ??= [first]).push(chunk);
  });
  stream.on('end', () => {
    if (isRefused) return;
    onBody(rest !== undefined ? Buffer.concat(rest, size) : (first ?? Buffer.alloc(0)));
  });
}

/**
 * Reads the one request message of a call, decompressed, and hands it over; a body that is
 * not exactly one message ends the call with the protocol's status.
 */
export function readUnary(
  stream: http2.ServerHttp2Stream,
  encoding: string | undefined,
  logger: Logger,
  handle: (message: FramedMessage) => void,
): void {
  readBody(
    stream,
    (body) => {
      let message: FramedMessage;
      try {
        message = uncompressed(singleMessage(body), encoding);
      } catch (err: unknown) {
        failCall(stream, err, logger);
        return;
      }
      handle(message);
    },
    (err) => {
      failCall(stream, err, logger);
    },
  );
}
