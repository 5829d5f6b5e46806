// The HTTP/2 framing both raw bench clients share (h2-raw.ts for unary calls, rlqs-wire.ts for
// quota streams): frame constants, frame headers, a client's opening, and the split of the
// bytes received into whole frames.

/** Frame types (RFC 9113 section 6). */
export const TYPE = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
} as const;
/** Frame flags: END_STREAM and ACK share a bit, on different frames. */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8 } as const;
/** Settings identifiers (section 6.5.2). */
export const SETTING = { ENABLE_PUSH: 0x2, INITIAL_WINDOW_SIZE: 0x4, MAX_FRAME_SIZE: 0x5 } as const;
/** The windows these clients give the server: as large as HTTP/2 allows. */
export const RECEIVE_WINDOW = 0x7fffffff;
export const DEFAULT_WINDOW = 65_535;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export function frameHeader(length: number, type: number, flags: number, stream: number): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return header;
}

/** What a client sends first: the preface, SETTINGS (no push, RECEIVE_WINDOW per stream), and
 * the connection's window raised to RECEIVE_WINDOW. */
export function clientOpening(): Buffer {
  const settings = Buffer.alloc(12);
  settings.writeUInt16BE(SETTING.ENABLE_PUSH, 0);
  settings.writeUInt32BE(0, 2);
  settings.writeUInt16BE(SETTING.INITIAL_WINDOW_SIZE, 6);
  settings.writeUInt32BE(RECEIVE_WINDOW, 8);
  const connectionWindow = Buffer.alloc(4);
  connectionWindow.writeUInt32BE(RECEIVE_WINDOW - DEFAULT_WINDOW, 0);
  return Buffer.concat([
    PREFACE,
    frameHeader(settings.length, TYPE.SETTINGS, 0, 0),
    settings,
    frameHeader(4, TYPE.WINDOW_UPDATE, 0, 0),
    connectionWindow,
  ]);
}

/** A WINDOW_UPDATE frame of `increment` on the connection. */
export function connectionCredit(increment: number): Buffer {
  const frame = Buffer.concat([frameHeader(4, TYPE.WINDOW_UPDATE, 0, 0), Buffer.alloc(4)]);
  frame.writeUInt32BE(increment, 9);
  return frame;
}

/** A DATA frame's data, without its padding. */
export function unpadded(flags: number, payload: Buffer): Buffer {
  if ((flags & FLAG.PADDED) === 0) return payload;
  return payload.subarray(1, payload.length - (payload[0] ?? 0));
}

export type FrameSink = (type: number, flags: number, stream: number, payload: Buffer) => void;

/** Bytes received, handed on as whole frames; a frame cut short waits for the rest. */
export class FrameSplitter {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly sink: FrameSink) {}

  read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const buffered = this.buffered;
    let offset = 0;
    while (buffered.length - offset >= 9) {
      const length = buffered.readUIntBE(offset, 3);
      if (buffered.length - offset < 9 + length) break;
      const type = buffered[offset + 3] ?? 0;
      const flags = buffered[offset + 4] ?? 0;
      const stream = buffered.readUInt32BE(offset + 5) & 0x7fffffff;
      const payload = buffered.subarray(offset + 9, offset + 9 + length);
      offset += 9 + length;
      this.sink(type, flags, stream, payload);
    }
    this.buffered = offset === buffered.length ? Buffer.alloc(0) : buffered.subarray(offset);
  }
}
