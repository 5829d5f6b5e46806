// Splits a connection's incoming bytes into the client preface and then whole frames, a turn's
// worth at a time: once a turn's budget of work is spent, the rest waits for resume().
import { ConnectionError, ErrorCode, Flag, FRAME_HEADER_BYTES, FrameType, PREFACE } from './frames';
import { SpareBuffers } from './spare-buffers';
import { countTurn, joinPeer, leavePeer, now, PeerTurn, type TurnTaker, waitTurn } from './turns';

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

/**
 * What a frame counts for at least against the budgets: handling a frame costs about what
 * reading this many bytes of DATA does, so a flood of 13-byte WINDOW_UPDATE frames is read some
 * thousand frames a turn, not 20,000.
 */
export const FRAME_WORK_BYTES = 256;

/**
 * Where copies that outlive a read come from (spare-buffers.ts): a cut frame, within the largest
 * frame this side accepts (SETTINGS_MAX_FRAME_SIZE, 16 KiB), and the rest of a read left for a
 * later turn (a read is at most 64 KiB). 64 and 32 are kept (3 MiB), about as many as
 * connections a flood holds at once.
 */
const cutFrames = new SpareBuffers(16 * 1024 + FRAME_HEADER_BYTES, 64);
const heldReads = new SpareBuffers(64 * 1024, 32);

/** Bytes left for the next turn: a view of `store`, a copy this reader owns. */
interface Waiting {
  bytes: Buffer;
  store: Buffer;
}

/** The `count` bytes of `buf` from `start` are the preface's first, or the client is cut. */
function checkPreface(buf: Buffer, start: number, count: number): void {
  if (buf.compare(PREFACE, 0, count, start, start + count) !== 0) {
    throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the client preface is missing');
  }
}

/** Receives each whole frame; `payload` is a view valid only during the call. */
export type FrameSink = (type: number, flags: number, stream: number, payload: Buffer) => void;

/**
 * Chunks are valid only during read(): plaintext connections share one read buffer
 * (shared-reads.ts). What outlives the call is copied, once: the rest of a chunk left for the
 * next turn, and a frame the chunk ends inside, into a buffer that fits that frame. The next
 * chunk completes that frame alone, so a cut frame costs its own bytes, not a join with a whole
 * read; what was left for a turn is read in later turns from its one copy.
 */
export class FrameReader {
  /** What came after the turn's budget was spent, in order, read at resume(). */
  private waiting: Waiting[] = [];
  /**
   * The preface, a frame header or a whole frame, cut by the end of a chunk, being filled: its
   * first `pendingNeeded` bytes (a spare buffer may be longer).
   */
  private pending: Buffer | undefined = undefined;
  private pendingBytes = 0;
  private pendingNeeded = 0;
  private isPrefaceRead = false;
  /** Work done in this turn (or since resume()): frame bytes, and what charge() added. */
  private spent = 0;
  private turn = 0;
  private isTurnOver = false;
  /** What the connections of this one's peer address were read in the turn. */
  private readonly peer: PeerTurn;
  /** The stream whose header block the last frame read ended, or 0. */
  private blockEnded = 0;

  /**
   * @param maxFrameBytes the SETTINGS_MAX_FRAME_SIZE this side advertised.
   * @param turnBytes the work after which the frames left wait for resume().
   * @param peerAddress the client's address: all connections of one are read its budget a turn
   * together (turns.ts), until leavePeer(). Without it, this reader is a peer of its own, bound
   * by `turnBytes` alone.
   */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly sink: FrameSink,
    private readonly turnBytes = Infinity,
    peerAddress?: string,
  ) {
    this.peer =
      peerAddress === undefined ? new PeerTurn('', Infinity, Infinity) : joinPeer(peerAddress);
  }

  /** `taker`, whose reading this reader held, resumes in a later turn after its peer's others. */
  waitTurn(taker: TurnTaker): void {
    waitTurn(this.peer, taker);
  }

  /** The connection is gone: its peer's record no longer counts it. */
  leavePeer(): void {
    leavePeer(this.peer);
  }

  /** The turn's budget is spent: frames read wait until resume(). */
  get isHeld(): boolean {
    return this.isTurnOver;
  }

  /** Work beyond a frame's bytes (a quota usage handled), counted against the turn. */
  charge(bytes: number): void {
    this.spent += bytes;
    this.peer.spent += bytes;
  }

  /** A stream opened, which costs `bytes` of work and counts against its peer's openings. */
  chargeOpening(bytes: number): void {
    this.charge(bytes);
    this.peer.opened();
  }

  /** A new turn: the frames that waited are read, until its budget is spent in turn. */
  resume(): void {
    this.isTurnOver = false;
    this.spent = 0;
    this.peer.spentNow();
    while (this.waiting.length > 0) {
      const first = this.waiting[0] as Waiting;
      if (this.isTurnSpent() && !this.isBodyNext(first.bytes, 0)) {
        this.isTurnOver = true;
        return;
      }
      const next = this.waiting.shift() as Waiting;
      this.consume(next.bytes, next);
      // Unless its rest went back to the front of the queue, the copy has been read.
      if (this.waiting[0]?.store !== next.store) heldReads.give(next.store);
      if (this.isHeld) return;
    }
  }

  /**
   * The connection failed: what waited (up to a read chunk) is let go now, not when its
   * socket, lingering a second for the client's FIN, is gone.
   */
  discard(): void {
    for (const { store } of this.waiting) heldReads.give(store);
    this.waiting = [];
    if (this.pending !== undefined) cutFrames.give(this.pending);
    this.pending = undefined;
    this.pendingBytes = 0;
    this.isTurnOver = false;
  }

  /**
   * Feeds one chunk, valid only during the call; throws ConnectionError for bytes that cannot be
   * HTTP/2.
   */
  read(chunk: Buffer): void {
    if (this.isTurnOver) {
      // What arrives meanwhile waits behind the frames already waiting.
      this.wait(chunk, 0);
      return;
    }
    // The budget is a turn's: a connection that sends little each turn is never held.
    if (this.turn !== now.turn) {
      this.turn = now.turn;
      this.spent = 0;
    }
    countTurn();
    if (this.peer.mustWait) {
      // Its peer's other connections had this turn, or wait for theirs: all of it waits too.
      this.isTurnOver = true;
      this.wait(chunk, 0);
      return;
    }
    this.consume(chunk, undefined);
  }

  /**
   * Reads the frames of `buf`, a chunk (valid only during the call) or what waited (`owned`);
   * past the turn's budget, the rest waits: a copy of a chunk's, a view of what waited.
   */
  private consume(buf: Buffer, owned: Waiting | undefined): void {
    let offset = 0;
    while (this.hasPending()) {
      if (offset === buf.length) return;
      offset = this.fill(buf, offset);
      if (
        !this.hasPending() &&
        offset < buf.length &&
        this.isTurnSpent() &&
        !this.isBodyNext(buf, offset)
      ) {
        this.holdRest(buf, offset, owned);
        return;
      }
    }
    const start = this.isPrefaceRead ? offset : this.preface(buf, offset);
    if (start !== undefined) this.frames(buf, start, owned);
  }

  private hasPending(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Copies what the pending bytes lack from `chunk`; once whole, reads them (which may leave a
   * longer frame pending, when they were its header). Returns where the chunk's rest starts.
   */
  private fill(chunk: Buffer, from: number): number {
    const pending = this.pending as Buffer;
    const needed = this.pendingNeeded;
    const copied = chunk.copy(pending, this.pendingBytes, from, from + needed - this.pendingBytes);
    this.pendingBytes += copied;
    if (!this.isPrefaceRead) checkPreface(pending, 0, this.pendingBytes);
    if (this.pendingBytes < needed) return from + copied;
    this.pending = undefined;
    this.pendingBytes = 0;
    if (this.isPrefaceRead) {
      // One frame (or its header): read whole, so nothing of it waits, and the copy is free after.
      this.frames(pending.length === needed ? pending : pending.subarray(0, needed), 0, undefined);
      cutFrames.give(pending);
    } else {
      this.isPrefaceRead = true;
    }
    return from + copied;
  }

  /** Checks the client preface at `offset`; returns the offset past it, if it is all there. */
  private preface(buf: Buffer, offset: number): number | undefined {
    const count = Math.min(buf.length - offset, PREFACE.length);
    checkPreface(buf, offset, count);
    if (count < PREFACE.length) {
      this.pend(buf, offset, PREFACE.length);
      return undefined;
    }
    this.isPrefaceRead = true;
    return offset + PREFACE.length;
  }

  private frames(buf: Buffer, start: number, owned: Waiting | undefined): void {
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
        this.pend(buf, offset, FRAME_HEADER_BYTES + length);
        return;
      }
      const type = buf[offset + 3] ?? 0;
      const flags = buf[offset + 4] ?? 0;
      const stream = buf.readUInt32BE(offset + 5) & 0x7fffffff;
      this.sink(type, flags, stream, buf.subarray(offset + FRAME_HEADER_BYTES, end));
      offset = end;
      const work = Math.max(FRAME_HEADER_BYTES + length, FRAME_WORK_BYTES);
      this.spent += work;
      this.peer.spent += work;
      now.frameBytes += work;
      this.blockEnded =
        (type === FrameType.HEADERS || type === FrameType.CONTINUATION) &&
        (flags & Flag.END_HEADERS) !== 0
          ? stream
          : 0;
      if (this.isTurnSpent() && offset < buf.length && !this.isBodyNext(buf, offset)) {
        this.holdRest(buf, offset, owned);
        return;
      }
    }
    if (offset < buf.length) this.pend(buf, offset, FRAME_HEADER_BYTES);
  }

  /**
   * Whether the frame at `offset` is the first DATA of the stream whose header block the last
   * frame ended. The two are read in one turn: a request sent whole, cut apart by a turn, would
   * count as a stream whose body has not begun, and be refused past its peer's share.
   */
  private isBodyNext(buf: Buffer, offset: number): boolean {
    return (
      this.blockEnded !== 0 &&
      buf.length - offset >= FRAME_HEADER_BYTES &&
      buf[offset + 3] === FrameType.DATA &&
      (buf.readUInt32BE(offset + 5) & 0x7fffffff) === this.blockEnded
    );
  }

  /**
   * Its own budget spent, its peer's, or its share once all connections together spent theirs.
   */
  private isTurnSpent(): boolean {
    const { spent } = this;
    return (
      spent >= this.turnBytes ||
      this.peer.spent >= this.peer.budget ||
      (now.frameBytes >= SHARED_TURN_BYTES && spent >= SHARE_BYTES)
    );
  }

  /**
   * The turn is over: the rest of `buf` from `offset` waits for resume(), ahead of what came
   * after it: a view of what already waited, a copy of a chunk.
   */
  private holdRest(buf: Buffer, offset: number, owned: Waiting | undefined): void {
    this.isTurnOver = true;
    if (owned === undefined) this.wait(buf, offset);
    else this.waiting.unshift({ bytes: buf.subarray(offset), store: owned.store });
  }

  /** A copy of `chunk` from `offset` waits behind what already waits. */
  private wait(chunk: Buffer, offset: number): void {
    const length = chunk.length - offset;
    const store = heldReads.take(length);
    chunk.copy(store, 0, offset);
    this.waiting.push({ bytes: store.subarray(0, length), store });
  }

  /** `buf` from `offset` is the start of `needed` bytes: copied into a buffer that fits them. */
  private pend(buf: Buffer, offset: number, needed: number): void {
    const pending = cutFrames.take(needed);
    this.pendingBytes = buf.copy(pending, 0, offset);
    this.pendingNeeded = needed;
    this.pending = pending;
  }
}
