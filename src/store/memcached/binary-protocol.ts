// The memcached binary-protocol commands the store sends (increment, decrement, get, and a no-op
// to see that a server answers) and the response header they come back with.

/** Every request and response starts with a header of this size. */
export const HEADER_BYTES = 24;

const REQUEST_MAGIC = 0x80;
const RESPONSE_MAGIC = 0x81;
/** Where the opaque field sits: the connection numbers each request there. */
export const OPAQUE_OFFSET = 12;

export const OPCODE = Object.freeze({ get: 0x00, increment: 0x05, decrement: 0x06, noop: 0x0a });
export const STATUS = Object.freeze({ ok: 0x0000, keyNotFound: 0x0001 });

/** In an arithmetic request, this expiry means "do not create a missing key". */
export const NO_CREATE = 0xffffffff;

/** One response: its status, the opaque it echoes and its value (extras and key left out). */
export interface MemcachedResponse {
  readonly status: number;
  readonly opaque: number;
  readonly value: Buffer;
}

/** The binary protocol's words for the statuses a counter command can meet. */
const STATUS_TEXT: Readonly<Record<number, string>> = Object.freeze({
  0x0004: 'invalid arguments',
  0x0005: 'item not stored',
  0x0006: 'the stored value is not a number',
  0x0081: 'unknown command',
  0x0082: 'out of memory',
  0x0086: 'temporary failure',
});

export function describeStatus(status: number): string {
  return STATUS_TEXT[status] ?? `status 0x${status.toString(16).padStart(4, '0')}`;
}

/** A request: header, extras, then the key's UTF-8 bytes; no value, CAS 0, opaque 0. */
function request(opcode: number, key: string, extras: Buffer | undefined): Buffer {
  const keyBytes = Buffer.byteLength(key);
  const extrasBytes = extras?.length ?? 0;
  const out = Buffer.alloc(HEADER_BYTES + extrasBytes + keyBytes);
  out[0] = REQUEST_MAGIC;
  out[1] = opcode;
  out.writeUInt16BE(keyBytes, 2);
  out[4] = extrasBytes;
  out.writeUInt32BE(extrasBytes + keyBytes, 8);
  extras?.copy(out, HEADER_BYTES);
  out.write(key, HEADER_BYTES + extrasBytes, 'utf8');
  return out;
}

/** The extras of an arithmetic request: amount, initial value (both 64-bit), expiry. */
function arithmeticExtras(amount: number, initial: number, expiry: number): Buffer {
  const extras = Buffer.alloc(20);
  extras.writeBigUInt64BE(BigInt(amount), 0);
  extras.writeBigUInt64BE(BigInt(initial), 8);
  extras.writeUInt32BE(expiry, 16);
  return extras;
}

/** Adds `delta`, or creates the key holding `delta` with `expiry` when it is missing. */
export function incrementRequest(key: string, delta: number, expiry: number): Buffer {
  return request(OPCODE.increment, key, arithmeticExtras(delta, delta, expiry));
}

/** Subtracts `delta` (memcached floors at 0); a missing key stays missing. */
export function decrementRequest(key: string, delta: number): Buffer {
  return request(OPCODE.decrement, key, arithmeticExtras(delta, 0, NO_CREATE));
}

export function getRequest(key: string): Buffer {
  return request(OPCODE.get, key, undefined);
}

/** Does nothing; any answer shows the server reads and answers the binary protocol. */
export function noopRequest(): Buffer {
  return request(OPCODE.noop, '', undefined);
}

/**
 * The first response in `buffer` and the bytes it takes; undefined while it is incomplete.
 * Throws when the bytes are not a response (the connection is then out of step).
 */
export function parseResponse(
  buffer: Buffer,
): { readonly response: MemcachedResponse; readonly bytes: number } | undefined {
  if (buffer.length < HEADER_BYTES) return undefined;
  if (buffer[0] !== RESPONSE_MAGIC) {
    throw new Error(
      `a reply did not start with the response magic (0x${(buffer[0] ?? 0).toString(16)})`,
    );
  }
  const bodyBytes = buffer.readUInt32BE(8);
  const bytes = HEADER_BYTES + bodyBytes;
  if (buffer.length < bytes) return undefined;
  const keyBytes = buffer.readUInt16BE(2);
  const extrasBytes = buffer[4] ?? 0;
  return {
    response: {
      status: buffer.readUInt16BE(6),
      opaque: buffer.readUInt32BE(OPAQUE_OFFSET),
      value: buffer.subarray(HEADER_BYTES + extrasBytes + keyBytes, bytes),
    },
    bytes,
  };
}

/** The 64-bit counter of an arithmetic reply; counts stay far below 2^53. */
export function counterValue(response: MemcachedResponse): number {
  return response.value.length >= 8 ? Number(response.value.readBigUInt64BE(0)) : 0;
}

/** A GET reply's value: memcached keeps counters as decimal text (the reference's too). */
export function storedValue(response: MemcachedResponse): number {
  const value = Number.parseInt(response.value.toString('latin1'), 10);
  return Number.isFinite(value) && value > 0 ? value : 0;
}
