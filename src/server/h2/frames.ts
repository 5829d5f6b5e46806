// HTTP/2 frame types, flags, error codes and settings (RFC 9113 sections 6, 7 and 6.5.2).

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME_HEADER_BYTES = 9;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20,
} as const;

export const ErrorCode = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** The defaults every peer starts from (section 6.5.2). */
export const DEFAULT_WINDOW = 65_535;
export const DEFAULT_MAX_FRAME = 16_384;
export const DEFAULT_TABLE_BYTES = 4096;
export const MAX_WINDOW = 2 ** 31 - 1;
export const MAX_FRAME_LIMIT = 2 ** 24 - 1;

/** A failure that ends the whole connection with GOAWAY and this code. */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** A frame's payload without its padding (section 6.1). */
export function unpadded(flags: number, payload: Buffer): Buffer {
  if ((flags & Flag.PADDED) === 0) return payload;
  const padding = payload[0] ?? 0;
  if (payload.length === 0 || padding >= payload.length) {
    throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'padding as long as the frame');
  }
  return payload.subarray(1, payload.length - padding);
}

export function checkLength(payload: Buffer, length: number, stream: number): void {
  if (payload.length !== length) {
    throw new ConnectionError(
      ErrorCode.FRAME_SIZE_ERROR,
      `a frame of ${String(payload.length)} bytes where ${String(length)} belong (stream ${String(stream)})`,
    );
  }
}
