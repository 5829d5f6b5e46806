// Splits a connection's incoming bytes into the client preface and then whole frames, a turn's
// worth at a time: once a turn's budget of work is spent, the rest waits for resume().
import { ConnectionError, ErrorCode, FRAME_HEADER_BYTES, PREFACE } from './frames';

/**
 * Frame bytes all connections together are read in a turn before each is held to its share:
 * past it, a connection that has been read SHARE_BYTES in this turn waits for the next. Without
 * it, 50 connections each sending a turn's budget made every turn read 3 MiB, and a call on
 * another connection waited for all of it; a connection sending less than a share a turn (a
 * client with 16 calls in flight sends about 3 KiB) is never held by it.
 */
const SHARED_TURN_BYTES = 256 * 1024;
/** What each connection may be read in a turn once the shared budget is spent: a whole frame. */
const SHARE_BYTES = 16 * 1024;

/** The turn of the event loop, counted only while some connection is being read. */
let turn = 0;
let isTurnCounted = false;
/** Frame bytes read in this turn, all connections together. */
let turnFrameBytes = 0;
function nextTurn(): void {
  turn += 1;
  isTurnCounted = false;
  turnFrameBytes = 0;
}

/** Receives each whole frame; `payload` is a view valid only during the call. */
export type FrameSink = (type: number, flags: number, stream: number, payload: Buffer) => void;

export class FrameReader {
  /** Bytes of an unfinished frame (or preface), kept as they came until it is whole. */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** How many bytes the unfinished part needs before it is worth joining. */
  private needed = 0;
  private isPrefaceRead = false;
  /** Work done in this turn (or since resume()): frame bytes, and what charge() added. */
  private spent = 0;
  private turn = 0;
  private isTurnOver = false;

  /**
   * @param maxFrameBytes the SETTINGS_MAX_FRAME_SIZE this side advertised.
   * @param turnBytes the work after which the frames left wait for resume().
   */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly sink: FrameSink,
    private readonly turnBytes = Infinity,
  ) {}

  /** The turn's budget is spent: frames read wait until resume(). */
  get isHeld(): boolean {
    return this.isTurnOver;
  }

  /** Work beyond a frame's bytes (a stream opened), counted against the turn. */
  charge(bytes: number): void {
    this.spent += bytes;
  }

  /** A new turn: the frames that waited are read, until its budget is spent in turn. */
  resume(): void {
    this.isTurnOver = false;
    this.spent = 0;
    if (this.parts.length === 0) return;
    const buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.parts = [];
    this.partBytes = 0;
    this.frames(buf, 0);
  }

  /**
   * The connection failed: what waited (up to a read chunk) is let go now, not when its
   * socket, lingering a second for the client's FIN, is gone.
   */
  discard(): void {
    this.parts = [];
    this.partBytes = 0;
    this.isTurnOver = false;
  }

  /** Feeds one chunk; throws ConnectionError for bytes that cannot be HTTP/2. */
  read(chunk: Buffer): void {
    if (this.isTurnOver) {
      // What arrives meanwhile waits behind the frames already waiting.
      this.parts.push(chunk);
      this.partBytes += chunk.length;
      return;
    }
    // The budget is a turn's: a connection that sends little each turn is never held.
    if (this.turn !== turn) {
      this.turn = turn;
      this.spent = 0;
    }
    if (!isTurnCounted) {
      isTurnCounted = true;
      setImmediate(nextTurn);
    }
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
      this.spent += FRAME_HEADER_BYTES + length;
      turnFrameBytes += FRAME_HEADER_BYTES + length;
      if (this.isTurnSpent() && offset < buf.length) {
        this.isTurnOver = true;
        this.keep(buf.subarray(offset), FRAME_HEADER_BYTES);
        return;
      }
    }
    if (offset < buf.length) this.keep(buf.subarray(offset), FRAME_HEADER_BYTES);
  }

  /** Its own budget spent, or its share once all connections together spent theirs. */
  private isTurnSpent(): boolean {
    const { spent } = this;
    return spent >= this.turnBytes || (turnFrameBytes >= SHARED_TURN_BYTES && spent >= SHARE_BYTES);
  }

  private keep(rest: Buffer, needed: number): void {
    this.parts = [rest];
    this.partBytes = rest.length;
    this.needed = needed;
  }
}
