// gRPC over HTTP/2, the parts a server needs: message framing, compression, deadlines and
// status trailers (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).
import zlib from 'node:zlib';
import { status as GrpcStatus } from '@grpc/grpc-js';

export { GrpcStatus };

/** Encodings a request may use; answers are never compressed. */
export const ACCEPT_ENCODING = 'identity,deflate,gzip';

/** A failure that ends the call with this status and message. */
export class CallError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
}

const TIMEOUT_UNITS_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1000,
  m: 1,
  u: 0.001,
  n: 0.000001,
};

/** The grpc-timeout header in milliseconds; undefined when absent or not well formed. */
export function parseTimeout(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (match === null) return undefined;
  return Number(match[1]) * (TIMEOUT_UNITS_MS[match[2] ?? 'S'] ?? 1000);
}

/** grpc-message is percent-encoded: anything outside printable ASCII, and '%' itself. */
export function encodeStatusMessage(message: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(message)) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The one message of a unary request body: flag byte, four-byte length, then the bytes. */
export interface FramedMessage {
  readonly isCompressed: boolean;
  readonly buf: Buffer;
  readonly start: number;
  readonly end: number;
}

/** Splits a request body into exactly one framed message of at most `maxBytes`. */
export function singleMessage(body: Buffer, maxBytes: number): FramedMessage {
  if (body.length < 5) {
    throw new CallError(
      GrpcStatus.INTERNAL,
      body.length === 0 ? 'the request carries no message' : 'the request message is cut short',
    );
  }
  const flag = body[0];
  const length = body.readUInt32BE(1);
  if (flag !== 0 && flag !== 1) {
    throw new CallError(GrpcStatus.INTERNAL, `the message flag ${String(flag)} is not 0 or 1`);
  }
  if (length > maxBytes) throw messageTooLarge(maxBytes);
  if (body.length < 5 + length) {
    throw new CallError(GrpcStatus.INTERNAL, 'the request message is cut short');
  }
  if (body.length > 5 + length) {
    throw new CallError(GrpcStatus.INTERNAL, 'a unary call carries more than one message');
  }
  return { isCompressed: flag === 1, buf: body, start: 5, end: 5 + length };
}

/** The refusal of a request message larger than MAX_REQUEST_BYTES, before or after inflating. */
export function messageTooLarge(maxBytes: number): CallError {
  return new CallError(
    GrpcStatus.RESOURCE_EXHAUSTED,
    `the request message is larger than the ${maxBytes} bytes accepted (MAX_REQUEST_BYTES)`,
  );
}

/** The message bytes, decompressed (to at most `maxBytes`) when the sender compressed them. */
export function uncompressed(
  message: FramedMessage,
  encoding: string | undefined,
  maxBytes: number,
): FramedMessage {
  if (!message.isCompressed) return message;
  const compressed = message.buf.subarray(message.start, message.end);
  const options = { maxOutputLength: maxBytes };
  let plain: Buffer;
  try {
    if (encoding === 'gzip') plain = zlib.gunzipSync(compressed, options);
    else if (encoding === 'deflate') plain = zlib.inflateSync(compressed, options);
    else {
      throw new CallError(
        GrpcStatus.INTERNAL,
        `a compressed message arrived with grpc-encoding ${encoding ?? 'identity'}`,
      );
    }
  } catch (err: unknown) {
    if (err instanceof CallError) throw err;
    const code = (err as { code?: unknown }).code;
    throw code === 'ERR_BUFFER_TOO_LARGE'
      ? messageTooLarge(maxBytes)
      : new CallError(GrpcStatus.INTERNAL, `the ${encoding ?? ''} message does not decompress`);
  }
  return { isCompressed: false, buf: plain, start: 0, end: plain.length };
}

/** Whether a request's grpc-encoding is one this server reads. */
export function isAcceptedEncoding(
  encoding: string | string[] | undefined,
): encoding is 'identity' | 'gzip' | 'deflate' | undefined {
  return (
    encoding === undefined ||
    encoding === 'identity' ||
    encoding === 'gzip' ||
    encoding === 'deflate'
  );
}
