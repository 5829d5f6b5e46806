// Splits a connection's incoming bytes into the client preface and then whole frames.
import { ConnectionError, ErrorCode, FRAME_HEADER_BYTES, PREFACE } from './frames';

/** Receives each whole frame; `payload` is a view valid only during the call. */
export type FrameSink = (type: number, flags: number, stream: number, payload: Buffer) => void;

export class FrameReader {
  /** Bytes of an unfinished frame (or preface), kept as they came until it is whole. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** How many bytes the unfinished part needs before it is worth joining. */
  private needed = 0;
  private isPrefaceRead = false;

  /** @param maxFrameBytes the SETTINGS_MAX_FRAME_SIZE this side advertised. */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly sink: FrameSink,
  ) {}

  /** Feeds one chunk; throws ConnectionError for bytes that cannot be HTTP/2. */
  read(chunk: Buffer): void {
    let buf = chunk;
    if (this.parts.length > 0) {
      this.parts.push(chunk);
      this.partBytes += chunk.length;
      // A frame trickled in byte by byte is joined once, not once per byte.
      if (this.partBytes < this.needed) return;
      buf = Buffer.concat(this.parts, this.partBytes);
      this.parts = [];
      this.partBytes = 0;
    }
    let offset = 0;
    if (!this.isPrefaceRead) {
      const compared = Math.min(buf.length, PREFACE.length);
      if (buf.compare(PREFACE, 0, compared, 0, compared) !== 0) {
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the client preface is missing');
      }
      if (buf.length < PREFACE.length) {
        this.keep(buf, PREFACE.length);
        return;
      }
      this.isPrefaceRead = true;
      offset = PREFACE.length;
    }
    this.frames(buf, offset);
  }

  private frames(buf: Buffer, start: number): void {
    let offset = start;
    while (buf.length - offset >= FRAME_HEADER_BYTES) {
      const length =
        ((buf[offset] ?? 0) << 16) | ((buf[offset + 1] ?? 0) << 8) | (buf[offset + 2] ?? 0);
      if (length > this.maxFrameBytes) {
        throw new ConnectionError(
          ErrorCode.FRAME_SIZE_ERROR,
          `a frame of ${String(length)} bytes exceeds SETTINGS_MAX_FRAME_SIZE`,
        );
      }
      const end = offset + FRAME_HEADER_BYTES + length;
      if (end > buf.length) {
        this.keep(buf.subarray(offset), FRAME_HEADER_BYTES + length);
        return;
      }
      const type = buf[offset + 3] ?? 0;
      const flags = buf[offset + 4] ?? 0;
      const stream = buf.readUInt32BE(offset + 5) & 0x7fffffff;
      this.sink(type, flags, stream, buf.subarray(offset + FRAME_HEADER_BYTES, end));
      offset = end;
    }
    if (offset < buf.length) this.keep(buf.subarray(offset), FRAME_HEADER_BYTES);
  }

  private keep(rest: Buffer, needed: number): void {
    this.parts = [rest];
    this.partBytes = rest.length;
    this.needed = needed;
  }
}
