// A connection's open streams: opened by the client's HEADERS, ended by both sides' END_STREAM
// or by a reset; their 'close' events go out after the frames that closed them. The state of
// each stream (RFC 9113 section 5.1) changes here and nowhere else.
import { ClosedHow, ClosedStreams } from './closed-streams';
import { ConnectionError, ErrorCode, Flag, FrameType } from './frames';
import type { DecodedBlock, H2Headers } from './hpack';
import { encodeHeaderBlock } from './hpack-encoder';
import type { ConnectionLimits } from './limits';
import type { Output } from './output';
import { H2Stream, type H2Connection } from './stream';

const HEADERS_TOO_LARGE = encodeHeaderBlock({ ':status': 431 });

/** The connection as the table needs it: streams' owner, and told when it may end. */
export interface TableOwner extends H2Connection {
  /** Streams above this id are ignored: a GOAWAY told the client so. */
  readonly lastAcceptedId: number;
  endIfIdle(): void;
  /** A stream closed: what it still sends is forgotten. */
  streamClosed(stream: H2Stream): void;
}

/** A header block that would open a stream. */
export interface OpeningBlock {
  readonly id: number;
  readonly block: DecodedBlock;
  readonly isEnd: boolean;
  /** The receive window this side advertised for new streams. */
  readonly receiveWindow: number;
  /** The block was held past the buffer budget: the stream is refused, unprocessed. */
  readonly isOverBudget: boolean;
}

export class StreamTable {
  private highestId = 0;
  private readonly open = new Map<number, H2Stream>();
  private readonly recent = new ClosedStreams();
  private finished: H2Stream[] = [];
  /** Streams opened by the frames being read whose body was still to come. */
  private opening: H2Stream[] = [];

  constructor(
    private readonly owner: TableOwner,
    private readonly output: Output,
    private readonly maxConcurrent: number,
    private readonly maxHeaderListBytes: number,
    private readonly limits: ConnectionLimits,
    private readonly onStream: (stream: H2Stream, headers: H2Headers) => void,
  ) {}

  /** The highest stream id the client has used. */
  get lastId(): number {
    return this.highestId;
  }

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
  opened({ id, block, isEnd, receiveWindow, isOverBudget }: OpeningBlock): void {
    if (id % 2 === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'an even stream id');
    if (id <= this.highestId) {
      this.lateHeaders(id);
      return;
    }
    this.highestId = id;
    // After the final GOAWAY new streams are ignored: the client retries them elsewhere.
    if (id > this.owner.lastAcceptedId) return;
    if (block.listBytes > this.maxHeaderListBytes) {
      this.limits.oversizedBlock();
      this.output.frame(
        FrameType.HEADERS,
        Flag.END_HEADERS | Flag.END_STREAM,
        id,
        HEADERS_TOO_LARGE,
      );
      if (isEnd) this.recent.record(id, ClosedHow.ENDED_BY_CLIENT);
      else this.resetId(id, ErrorCode.NO_ERROR);
      return;
    }
    if (block.fault !== undefined) {
      this.failId(id, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    if (this.open.size >= this.maxConcurrent) {
      this.limits.refusedStream();
      this.resetId(id, ErrorCode.REFUSED_STREAM);
      return;
    }
    // Not counted against the client: the budget may be full of other connections' requests.
    if (isOverBudget) {
      this.resetId(id, ErrorCode.REFUSED_STREAM);
      return;
    }
    this.start(id, block, isEnd, receiveWindow);
  }

  private start(id: number, block: DecodedBlock, isEnd: boolean, receiveWindow: number): void {
    const stream = new H2Stream(id, this.owner, receiveWindow, block.contentLength);
    this.open.set(id, stream);
    // Ended before the handler runs, so an answer it gives at once closes the stream whole.
    const isWhole = isEnd && stream.incoming.end();
    if (isEnd && !isWhole) {
      // content-length above 0 on a request without a body.
      this.fail(stream, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    this.onStream(stream, block.headers);
    if (!isEnd) this.opening.push(stream);
    else if (!stream.closed) stream.emit('end');
  }

  /**
   * The end of a read: the streams it opened whose body has not begun count as requests held
   * in the buffer budget (refused REFUSED_STREAM past it) until it does. A request whose body
   * came in the same read, as Envoy sends them, counts nothing.
   */
  holdHeaderOnly(): void {
    if (this.opening.length === 0) return;
    const opening = this.opening;
    this.opening = [];
    for (const stream of opening) stream.holdUntilBody();
  }

  /** HEADERS on a stream id already used: allowed only on a stream this side reset. */
  private lateHeaders(id: number): void {
    const how = this.recent.lookup(id);
    if (how === ClosedHow.RESET_HERE) return;
    if (how !== undefined) {
      throw new ConnectionError(
        ErrorCode.STREAM_CLOSED,
        `HEADERS on the closed stream ${String(id)}`,
      );
    }
    throw new ConnectionError(
      ErrorCode.PROTOCOL_ERROR,
      `HEADERS on the old stream id ${String(id)}`,
    );
  }

  /** The stream DATA arrived for; undefined when it is to be dropped. */
  receiving(id: number): H2Stream | undefined {
    const stream = this.open.get(id);
    if (stream === undefined) {
      this.checkNotIdle(id, 'DATA');
      const how = this.recent.lookup(id);
      if (how === ClosedHow.ENDED_BY_CLIENT || how === ClosedHow.RESET_BY_CLIENT) {
        this.failId(id, ErrorCode.STREAM_CLOSED);
      }
      return undefined;
    }
    if (stream.incoming.remoteEnded) {
      this.fail(stream, ErrorCode.STREAM_CLOSED);
      return undefined;
    }
    return stream;
  }

  /** Frames on streams the client never opened are a connection error (section 5.1). */
  checkNotIdle(id: number, what: string): void {
    if (id > this.highestId) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, `${what} on an idle stream`);
    }
  }

  /** A header block on an open stream: its trailers, which must end it. */
  trailers(stream: H2Stream, block: DecodedBlock, isEnd: boolean): void {
    if (stream.incoming.remoteEnded) this.fail(stream, ErrorCode.STREAM_CLOSED);
    else if (!isEnd || block.fault !== undefined) this.fail(stream, ErrorCode.PROTOCOL_ERROR);
    else this.remoteEnded(stream);
  }

  /** END_STREAM from the client on DATA or trailers. */
  remoteEnded(stream: H2Stream): void {
    if (!stream.incoming.end()) {
      this.fail(stream, ErrorCode.PROTOCOL_ERROR);
      return;
    }
    stream.bodyBegan();
    stream.emit('end');
  }

  /** This side sent END_STREAM: done, and the client is told to stop if it is still sending. */
  localEnded(stream: H2Stream): void {
    if (stream.incoming.remoteEnded) {
      this.finish(stream, ClosedHow.ENDED_BY_CLIENT);
      return;
    }
    this.output.frameOfWords(FrameType.RST_STREAM, stream.id, ErrorCode.NO_ERROR);
    this.finish(stream, ClosedHow.RESET_HERE);
  }

  resetByClient(id: number): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    const stream = this.open.get(id);
    if (stream === undefined) {
      this.checkNotIdle(id, 'RST_STREAM');
      return;
    }
    this.limits.reset();
    this.finish(stream, ClosedHow.RESET_BY_CLIENT);
  }

  /** A stream error (section 5.4.2): RST_STREAM with `code`, counted against the client. */
  fail(stream: H2Stream, code: number): void {
    this.limits.invalidFrame();
    this.reset(stream, code);
  }

  /** A stream error on a stream that is not open (idle, or already closed). */
  failId(id: number, code: number): void {
    this.limits.invalidFrame();
    const stream = this.open.get(id);
    if (stream !== undefined) this.reset(stream, code);
    else this.resetId(id, code);
  }

  /** This side resets the stream. */
  reset(stream: H2Stream, code: number): void {
    if (stream.closed) return;
    this.output.frameOfWords(FrameType.RST_STREAM, stream.id, code);
    this.finish(stream, ClosedHow.RESET_HERE);
  }

  private resetId(id: number, code: number): void {
    this.output.frameOfWords(FrameType.RST_STREAM, id, code);
    this.recent.record(id, ClosedHow.RESET_HERE);
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
      stream.markClosed();
      this.owner.streamClosed(stream);
      this.finished.push(stream);
    }
    this.open.clear();
    this.announceClosed();
  }

  private finish(stream: H2Stream, how: ClosedHow): void {
    stream.markClosed();
    this.recent.record(stream.id, how);
    this.open.delete(stream.id);
    this.finished.push(stream);
    this.owner.streamClosed(stream);
    this.owner.endIfIdle();
  }
}
