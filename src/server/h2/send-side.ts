// What a connection sends on its streams: header blocks, and DATA within the client's flow
// control windows (the connection's and each stream's), queued while they are shut.
import {
  ConnectionError,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FrameType,
  MAX_FRAME_LIMIT,
  MAX_WINDOW,
  Setting,
} from './frames';
import { encodeHeaderBlock, type OutgoingHeaders } from './hpack';
import type { Output } from './output';
import type { DataEnding, H2Stream } from './stream';
import type { StreamTable } from './stream-table';

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

export class SendSide {
  /** The client's SETTINGS_INITIAL_WINDOW_SIZE: each new stream's send window. */
  initialWindow = DEFAULT_WINDOW;
  private window = DEFAULT_WINDOW;
  private maxFrame = DEFAULT_MAX_FRAME;
  private readonly blocked = new Set<H2Stream>();

  constructor(
    private readonly output: Output,
    private readonly streams: StreamTable,
    private readonly scheduleFlush: () => void,
  ) {}

  sendHeaders(stream: H2Stream, fields: OutgoingHeaders, isEnd: boolean): void {
    const block = headerBlock(fields);
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
    if (data !== undefined && data.length > 0) (stream.queued ??= []).push(data);
    if (ending !== undefined) stream.ending = ending;
    this.pump(stream);
    this.scheduleFlush();
  }

  /** The streams' DATA that a WINDOW_UPDATE or a SETTINGS change let through. */
  windowUpdate(id: number, increment: number): void {
    if (id === 0) {
      if (increment === 0)
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      this.window += increment;
      if (this.window > MAX_WINDOW) {
        throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'the connection window overflows');
      }
      this.pumpBlocked();
      return;
    }
    const stream = this.streams.get(id);
    if (stream === undefined) {
      if (id > this.streams.lastId) {
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
      }
      return;
    }
    if (increment === 0) {
      this.streams.fail(stream, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) this.streams.fail(stream, ErrorCode.FLOW_CONTROL_ERROR);
    else if (this.blocked.has(stream)) this.pump(stream);
  }

  applySetting(id: number, value: number): void {
    switch (id) {
      case Setting.ENABLE_PUSH:
        if (value > 1) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'ENABLE_PUSH above 1');
        return;
      case Setting.INITIAL_WINDOW_SIZE: {
        if (value > MAX_WINDOW) {
          throw new ConnectionError(
            ErrorCode.FLOW_CONTROL_ERROR,
            'INITIAL_WINDOW_SIZE above 2^31-1',
          );
        }
        const change = value - this.initialWindow;
        this.initialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += change;
          if (stream.sendWindow > MAX_WINDOW) {
            throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'a stream window overflows');
          }
        }
        this.pumpBlocked();
        return;
      }
      case Setting.MAX_FRAME_SIZE:
        if (value < DEFAULT_MAX_FRAME || value > MAX_FRAME_LIMIT) {
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'MAX_FRAME_SIZE out of range');
        }
        this.maxFrame = value;
        return;
      default:
        // HEADER_TABLE_SIZE does not matter to an encoder that never indexes; the rest are
        // limits on what this side does not do (push) or advice.
        return;
    }
  }

  private pumpBlocked(): void {
    for (const stream of [...this.blocked]) this.pump(stream);
  }

  /** Sends what the windows allow of the stream's queue, then its ending once it is empty. */
  private pump(stream: H2Stream): void {
    const queue = stream.queued;
    while (queue !== undefined && queue.length > 0 && !stream.closed) {
      const head = queue[0] as Buffer;
      const allowed = Math.min(stream.sendWindow, this.window, this.maxFrame);
      if (allowed <= 0) {
        this.blocked.add(stream);
        return;
      }
      const length = Math.min(allowed, head.length);
      const isLast = length === head.length && queue.length === 1 && stream.ending === 'end';
      this.output.frame(FrameType.DATA, isLast ? Flag.END_STREAM : 0, stream.id, head, 0, length);
      stream.sendWindow -= length;
      this.window -= length;
      if (length === head.length) queue.shift();
      else queue[0] = head.subarray(length);
      if (isLast) {
        this.finishData(stream);
        return;
      }
    }
    this.blocked.delete(stream);
    if (stream.closed) return;
    if (stream.ending === 'end') {
      this.output.frame(FrameType.DATA, Flag.END_STREAM, stream.id);
      this.finishData(stream);
    } else if (stream.ending === 'trailers') {
      stream.ending = undefined;
      stream.wantTrailers();
    }
  }

  private finishData(stream: H2Stream): void {
    stream.ending = undefined;
    this.blocked.delete(stream);
    this.streams.localEnded(stream);
  }
}
