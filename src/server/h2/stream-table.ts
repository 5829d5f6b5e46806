// A connection's open streams: opened by the client's HEADERS, ended by both sides' END_STREAM
// or by a reset; their 'close' events go out after the frames that closed them.
import { ConnectionError, ErrorCode, Flag, FrameType } from './frames';
import { encodeHeaderBlock, type DecodedBlock, type H2Headers } from './hpack';
import type { ConnectionLimits } from './limits';
import type { Output } from './output';
import { H2Stream, type H2Connection } from './stream';

const HEADERS_TOO_LARGE = encodeHeaderBlock({ ':status': 431 });

/** The connection as the table needs it: streams' owner, and told when it may end. */
export interface TableOwner extends H2Connection {
  endIfIdle(): void;
}

export interface StreamWindows {
  readonly send: number;
  readonly receive: number;
}

export class StreamTable {
  /** The highest stream id the client has used. */
  lastId = 0;
  private readonly open = new Map<number, H2Stream>();
  private finished: H2Stream[] = [];

  constructor(
    private readonly owner: TableOwner,
    private readonly output: Output,
    private readonly maxConcurrent: number,
    private readonly limits: ConnectionLimits,
    private readonly onStream: (stream: H2Stream, headers: H2Headers) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  get(id: number): H2Stream | undefined {
    return this.open.get(id);
  }

  values(): IterableIterator<H2Stream> {
    return this.open.values();
  }

  /** A new stream's header block, decoded; refused (and forgotten) when it may not open. */
  opened(
    id: number,
    block: DecodedBlock,
    isEnd: boolean,
    maxHeaderListBytes: number,
    windows: StreamWindows,
  ): void {
    if (id % 2 === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'an even stream id');
    // Headers for a stream already closed (reset by this side, say) are ignored.
    if (id <= this.lastId) return;
    this.lastId = id;
    // After GOAWAY new streams are ignored: the client retries them on a new connection.
    if (this.owner.closed) return;
    if (block.listBytes > maxHeaderListBytes) {
      this.output.frame(
        FrameType.HEADERS,
        Flag.END_HEADERS | Flag.END_STREAM,
        id,
        HEADERS_TOO_LARGE,
      );
      if (!isEnd) this.output.frameOfWords(FrameType.RST_STREAM, id, ErrorCode.NO_ERROR);
      return;
    }
    if (block.fault !== undefined) {
      this.limits.invalidFrame();
      this.output.frameOfWords(FrameType.RST_STREAM, id, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    if (this.open.size >= this.maxConcurrent) {
      this.limits.refusedStream();
      this.output.frameOfWords(FrameType.RST_STREAM, id, ErrorCode.REFUSED_STREAM);
      return;
    }
    const stream = new H2Stream(id, this.owner, windows.send, windows.receive);
    this.open.set(id, stream);
    this.onStream(stream, block.headers);
    if (isEnd && !stream.closed) this.remoteEnded(stream);
  }

  /** The stream DATA arrived for; undefined when it is to be dropped. */
  receiving(id: number): H2Stream | undefined {
    const stream = this.open.get(id);
    if (stream === undefined) {
      if (id > this.lastId)
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on an idle stream');
      return undefined;
    }
    if (stream.isRemoteEnded) {
      this.fail(stream, ErrorCode.STREAM_CLOSED);
      return undefined;
    }
    return stream;
  }

  /** A header block on an open stream: its trailers, which must end it. */
  trailers(stream: H2Stream, isEnd: boolean): void {
    if (stream.isRemoteEnded) this.fail(stream, ErrorCode.STREAM_CLOSED);
    else if (!isEnd) this.fail(stream, ErrorCode.PROTOCOL_ERROR);
    else this.remoteEnded(stream);
  }

  remoteEnded(stream: H2Stream): void {
    stream.isRemoteEnded = true;
    stream.emit('end');
    if (stream.isEndSent && !stream.closed) this.finish(stream);
  }

  /** This side sent END_STREAM: done, and the client is told to stop if it is still sending. */
  localEnded(stream: H2Stream): void {
    stream.isEndSent = true;
    if (!stream.isRemoteEnded) {
      this.output.frameOfWords(FrameType.RST_STREAM, stream.id, ErrorCode.NO_ERROR);
    }
    this.finish(stream);
  }

  resetByClient(id: number): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    const stream = this.open.get(id);
    if (stream === undefined) {
      if (id > this.lastId)
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
      return;
    }
    this.limits.reset();
    this.finish(stream);
  }

  /** A stream error (section 5.4.2): RST_STREAM with `code`, counted against the client. */
  fail(stream: H2Stream, code: number): void {
    this.limits.invalidFrame();
    this.reset(stream, code);
  }

  /** This side resets the stream. */
  reset(stream: H2Stream, code: number): void {
    if (stream.closed) return;
    this.output.frameOfWords(FrameType.RST_STREAM, stream.id, code);
    this.finish(stream);
  }

  /** Emits 'close' on the streams that finished since the last call. */
  announceClosed(): void {
    if (this.finished.length === 0) return;
    const finished = this.finished;
    this.finished = [];
    for (const stream of finished) stream.emit('close');
  }

  /** The connection is gone: every stream closes unanswered. */
  closeAll(): void {
    for (const stream of this.open.values()) {
      stream.closed = true;
      this.finished.push(stream);
    }
    this.open.clear();
    this.announceClosed();
  }

  private finish(stream: H2Stream): void {
    stream.closed = true;
    stream.queued = undefined;
    this.open.delete(stream.id);
    this.finished.push(stream);
    this.owner.endIfIdle();
  }
}
