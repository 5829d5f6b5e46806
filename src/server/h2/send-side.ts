// What a connection sends on its streams: header blocks, and DATA within the client's flow
// control windows (the connection's and each stream's), queued while they are shut. Streams
// waiting for the connection window queue in order and are served until it is spent; streams
// waiting for their own window are set aside until it opens: no frame walks every stream.
import {
  ConnectionError,
  DEFAULT_MAX_FRAME,
  DEFAULT_TABLE_BYTES,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FrameType,
  MAX_FRAME_LIMIT,
  MAX_WINDOW,
  Setting,
} from './frames';
import { encodeHeaderBlock, type OutgoingHeaders } from './hpack-encoder';
import type { ConnectionLimits } from './limits';
import type { Output } from './output';
import type { DataEnding, H2Stream } from './stream';
import type { StreamTable } from './stream-table';
import { WaitQueue } from './wait-queue';

/** Header blocks of frozen (shared, constant) header objects, encoded once. */
const encodedBlocks = new WeakMap<OutgoingHeaders, Buffer>();

function headerBlock(fields: OutgoingHeaders): Buffer {
  if (!Object.isFrozen(fields)) return encodeHeaderBlock(fields);
  let block = encodedBlocks.get(fields);
  if (block === undefined) {
    block = encodeHeaderBlock(fields);
    encodedBlocks.set(fields, block);
  }
  return block;
}

/** A dynamic table size update to 0 (RFC 7541 section 6.3): this encoder never indexes. */
const TABLE_SIZE_ZERO = Buffer.from([0x20]);

export class SendSide {
  /** The client's SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
  private initialWindow = DEFAULT_WINDOW;
  private window = DEFAULT_WINDOW;
  private maxFrame = DEFAULT_MAX_FRAME;
  /** Set when the client lowered its table size: the next block must say so first. */
  private isTableUpdateDue = false;
  private isTableEmptied = false;
  /** The largest any stream's window has stood above the initial one: bounds overflow. */
  private maxCredit = 0;
  private readonly ready = new WaitQueue();
  private readonly parked = new Set<H2Stream>();

  constructor(
    private readonly output: Output,
    private readonly streams: StreamTable,
    private readonly limits: ConnectionLimits,
    private readonly scheduleFlush: () => void,
  ) {}

  sendHeaders(stream: H2Stream, fields: OutgoingHeaders, isEnd: boolean): void {
    let block = headerBlock(fields);
    if (this.isTableUpdateDue) {
      this.isTableUpdateDue = false;
      block = Buffer.concat([TABLE_SIZE_ZERO, block]);
    }
    const endFlag = isEnd ? Flag.END_STREAM : 0;
    if (block.length <= this.maxFrame) {
      this.output.frame(FrameType.HEADERS, Flag.END_HEADERS | endFlag, stream.id, block);
    } else {
      this.output.frame(FrameType.HEADERS, endFlag, stream.id, block, 0, this.maxFrame);
      for (let at = this.maxFrame; at < block.length; at += this.maxFrame) {
        const to = Math.min(block.length, at + this.maxFrame);
        const flags = to === block.length ? Flag.END_HEADERS : 0;
        this.output.frame(FrameType.CONTINUATION, flags, stream.id, block, at, to);
      }
    }
    if (isEnd) this.streams.localEnded(stream);
    this.scheduleFlush();
  }

  sendData(stream: H2Stream, data: Buffer | undefined, ending: DataEnding): void {
    stream.outgoing.enqueue(data, ending);
    // A stream already waiting keeps its place: what it adds goes out in order.
    if (stream.outgoing.place === 'none') this.pump(stream);
    this.scheduleFlush();
  }

  /** A WINDOW_UPDATE: the connection's serves the waiting queue, a stream's that stream. */
  windowUpdate(id: number, increment: number): void {
    // On a stream the RFC makes it a stream error; nghttp2 ends the connection either way.
    if (increment === 0)
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
    if (id === 0) {
      this.window += increment;
      if (this.window > MAX_WINDOW) {
        throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'the connection window overflows');
      }
      this.serveReady();
      return;
    }
    const stream = this.streams.get(id);
    if (stream === undefined) {
      this.streams.checkNotIdle(id, 'WINDOW_UPDATE');
      return;
    }
    const credit = stream.outgoing.credit(increment);
    this.maxCredit = Math.max(this.maxCredit, credit);
    if (this.initialWindow + credit > MAX_WINDOW) {
      this.streams.fail(stream, ErrorCode.FLOW_CONTROL_ERROR);
    } else if (stream.outgoing.place === 'parked') {
      this.parked.delete(stream);
      stream.outgoing.moveTo('none');
      this.pump(stream);
    }
  }

  applySetting(id: number, value: number): void {
    switch (id) {
      case Setting.HEADER_TABLE_SIZE:
        // Lowered below the default: the client's decoder waits for a size update (RFC 7541
        // section 4.2). One to 0 serves for every later value, as nothing is ever indexed.
        if (value < DEFAULT_TABLE_BYTES && !this.isTableEmptied) {
          this.isTableEmptied = true;
          this.isTableUpdateDue = true;
        }
        return;
      case Setting.ENABLE_PUSH:
        if (value > 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'ENABLE_PUSH above 1');
        return;
      case Setting.INITIAL_WINDOW_SIZE:
        this.setInitialWindow(value);
        return;
      case Setting.MAX_FRAME_SIZE:
        if (value < DEFAULT_MAX_FRAME || value > MAX_FRAME_LIMIT) {
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'MAX_FRAME_SIZE out of range');
        }
        this.maxFrame = value;
        return;
      default:
        // The rest are limits on what this side does not do (push) or advice.
        return;
    }
  }

  /** The client's initial window: every stream's window moves with it (section 6.9.2). */
  private setInitialWindow(value: number): void {
    if (value > MAX_WINDOW) {
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'INITIAL_WINDOW_SIZE above 2^31-1');
    }
    const isLarger = value > this.initialWindow;
    if (isLarger && value + this.maxCredit > MAX_WINDOW) this.checkOverflow(value);
    this.initialWindow = value;
    if (!isLarger || this.parked.size === 0) return;
    // Streams waiting for their own window may now send: a walk that takes the client's turn.
    this.limits.walked(this.parked.size);
    const parked = [...this.parked];
    this.parked.clear();
    for (const stream of parked) {
      stream.outgoing.moveTo('none');
      this.pump(stream);
    }
  }

  /** Whether a stream's window would pass 2^31-1: a walk, counted, and rarely needed. */
  private checkOverflow(value: number): void {
    this.limits.walked(this.streams.size);
    let maxCredit = 0;
    for (const stream of this.streams.values()) {
      maxCredit = Math.max(maxCredit, stream.outgoing.window(0));
    }
    this.maxCredit = maxCredit;
    if (value + maxCredit > MAX_WINDOW) {
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'a stream window overflows');
    }
  }

  /** Serves the streams waiting for the connection window, oldest first, while it lasts. */
  private serveReady(): void {
    while (this.window > 0) {
      const stream = this.ready.shift();
      if (stream === undefined) return;
      stream.outgoing.moveTo('none');
      if (!stream.closed) this.pump(stream);
    }
  }

  /** Sends what the windows allow of the stream's queue, then its ending once it is empty. */
  private pump(stream: H2Stream): void {
    const out = stream.outgoing;
    for (let head = out.head(); head !== undefined; head = out.head()) {
      const streamWindow = out.window(this.initialWindow);
      if (streamWindow <= 0) {
        out.moveTo('parked');
        this.parked.add(stream);
        return;
      }
      if (this.window <= 0) {
        out.moveTo('ready');
        this.ready.push(stream);
        return;
      }
      const length = Math.min(streamWindow, this.window, this.maxFrame, head.length);
      const isLast = out.endsWith(length);
      this.output.frame(FrameType.DATA, isLast ? Flag.END_STREAM : 0, stream.id, head, 0, length);
      this.window -= length;
      out.sent(length);
      if (isLast) {
        out.takeEnding();
        this.streams.localEnded(stream);
        return;
      }
    }
    const ending = out.takeEnding();
    if (ending === 'end') {
      this.output.frame(FrameType.DATA, Flag.END_STREAM, stream.id);
      this.streams.localEnded(stream);
    } else if (ending === 'trailers') {
      stream.wantTrailers();
    }
  }

  /** A stream closed: it no longer waits anywhere. */
  forget(stream: H2Stream): void {
    if (stream.outgoing.place === 'parked') this.parked.delete(stream);
    // One in the ready queue is skipped when its turn comes.
  }
}
