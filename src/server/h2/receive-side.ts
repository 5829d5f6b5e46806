// What a connection reads on its streams (RFC 9113 sections 6.1, 6.2, 6.3 and 6.10): DATA
// within the receive windows, header blocks within the buffer budget decoded and handed to the
// stream table, PRIORITY checked and otherwise ignored.
import type { ConnectionBudget } from './buffer-budget';
import {
  ConnectionError,
  DEFAULT_TABLE_BYTES,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FrameType,
  unpadded,
} from './frames';
import { HeaderBlocks } from './header-blocks';
import { HpackDecoder, type DecodedBlock } from './hpack';
import { HpackError } from './hpack-error';
import type { ConnectionLimits } from './limits';
import type { Output } from './output';
import type { H2Stream } from './stream';
import type { StreamTable } from './stream-table';

/** The connection receive window: raised at once, topped up when half is used. */
export const CONNECTION_WINDOW = 1024 * 1024;
/** A stream's unread window is given back once this much has arrived and it is still open. */
const STREAM_CREDIT_BYTES = DEFAULT_WINDOW / 2;

export class ReceiveSide {
  private readonly decoder: HpackDecoder;
  private readonly blocks: HeaderBlocks;
  private connectionUncredited = 0;
  private connectionReceiveWindow = CONNECTION_WINDOW;

  constructor(
    private readonly output: Output,
    private readonly streams: StreamTable,
    private readonly limits: ConnectionLimits,
    budget: () => ConnectionBudget,
    maxHeaderListBytes: number,
  ) {
    this.decoder = new HpackDecoder(DEFAULT_TABLE_BYTES, maxHeaderListBytes);
    this.blocks = new HeaderBlocks(2 * maxHeaderListBytes, budget);
  }

  /** The stream of an unfinished header block, or 0: nothing else may come until it ends. */
  get openBlockStream(): number {
    return this.blocks.stream;
  }

  /** The connection closed: an unfinished header block's bytes are given back. */
  close(): void {
    this.blocks.release();
  }

  onDataFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on stream 0');
    const length = payload.length;
    this.connectionReceiveWindow -= length;
    if (this.connectionReceiveWindow < 0) {
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    }
    // Received bytes are handed on at once and bounded by the buffer budget, so the
    // connection's window is given back at once too.
    this.connectionUncredited += length;
    if (this.connectionUncredited >= CONNECTION_WINDOW / 2) {
      this.output.frameOfWords(FrameType.WINDOW_UPDATE, 0, this.connectionUncredited);
      this.connectionReceiveWindow += this.connectionUncredited;
      this.connectionUncredited = 0;
    }
    const data = unpadded(flags, payload);
    const isEnd = (flags & Flag.END_STREAM) !== 0;
    if (data.length === 0 && !isEnd) this.limits.invalidFrame();
    const stream = this.streams.receiving(id);
    if (stream !== undefined) this.deliver(stream, data, length, isEnd);
  }

  /** A DATA frame's body for an open stream, within its window, content-length and budget. */
  private deliver(stream: H2Stream, data: Buffer, length: number, isEnd: boolean): void {
    const fault = stream.incoming.receive(length, data.length);
    if (fault !== undefined) {
      this.streams.fail(
        stream,
        fault === 'flow' ? ErrorCode.FLOW_CONTROL_ERROR : ErrorCode.PROTOCOL_ERROR,
      );
      return;
    }
    const credit = isEnd ? 0 : stream.incoming.creditDue(STREAM_CREDIT_BYTES);
    if (credit > 0) this.output.frameOfWords(FrameType.WINDOW_UPDATE, stream.id, credit);
    // What the stream's reader keeps of the body it counts itself (H2Stream.keepOnly).
    if (data.length > 0) {
      stream.emit('data', data, isEnd);
      stream.bodyBegan();
    }
    if (isEnd && !stream.closed) this.streams.remoteEnded(stream);
  }

  onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let fragment = unpadded(flags, payload);
    if ((flags & Flag.PRIORITY) !== 0) {
      if (fragment.length < 5) {
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for PRIORITY');
      }
      // A stream cannot depend on itself (section 5.3.1): ended at once, as nghttp2 does.
      if ((fragment.readUInt32BE(0) & 0x7fffffff) === id) {
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS depending on itself');
      }
      fragment = fragment.subarray(5);
    }
    if ((flags & Flag.END_HEADERS) !== 0) this.onHeaderBlock(flags, id, fragment);
    else this.blocks.begin(id, flags, fragment);
  }

  onContinuation(flags: number, id: number, payload: Buffer): void {
    if (this.blocks.stream === 0) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
    }
    if (payload.length === 0 && (flags & Flag.END_HEADERS) === 0) this.limits.invalidFrame();
    const blockFlags = this.blocks.flags;
    const block = this.blocks.continued(payload, (flags & Flag.END_HEADERS) !== 0);
    if (block === undefined) return;
    try {
      this.onHeaderBlock(blockFlags, id, block, this.blocks.isOverBudget);
    } finally {
      this.blocks.release();
    }
  }

  /** `isOverBudget`: the block was held past the buffer budget, and a stream it opens refused. */
  private onHeaderBlock(flags: number, id: number, block: Buffer, isOverBudget = false): void {
    const isEnd = (flags & Flag.END_STREAM) !== 0;
    const existing = this.streams.get(id);
    const decoded = this.decode(block, existing !== undefined);
    if (existing !== undefined) this.streams.trailers(existing, decoded, isEnd);
    else
      this.streams.opened({
        id,
        block: decoded,
        isEnd,
        receiveWindow: DEFAULT_WINDOW,
        isOverBudget,
      });
  }

  private decode(block: Buffer, isTrailers: boolean): DecodedBlock {
    try {
      return this.decoder.decode(block, isTrailers);
    } catch (err: unknown) {
      if (err instanceof HpackError)
        throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, err.message);
      throw err;
    }
  }

  onPriority(id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PRIORITY on stream 0');
    if (payload.length !== 5) {
      this.streams.failId(id, ErrorCode.FRAME_SIZE_ERROR);
      return;
    }
    // Priorities are advice this server does not take, but one on itself is an error, which
    // nghttp2 makes the connection's.
    if ((payload.readUInt32BE(0) & 0x7fffffff) === id) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PRIORITY depending on itself');
    }
  }
}
