// One request stream on the server side: what node:http2's ServerHttp2Stream offers a gRPC
// server (respond, write, end, trailers, close and the data/end/close/wantTrailers events) at a
// fraction of its cost, over frames its connection writes. Its flow control state belongs to
// the connection's two sides: `outgoing` to the send side, `incoming` to the reader side.
// Unlike node's, a 'data' chunk is valid only during the event (it may be a view of the read
// buffer plaintext connections share); its second argument is true when 'end' follows at once,
// in the same call, so a listener that needs the chunk only until then need not copy it.
import { EventEmitter } from 'node:events';
import { ErrorCode } from './frames';
import type { OutgoingHeaders } from './hpack-encoder';
import { IncomingState } from './incoming-state';
import { OutgoingState, type DataEnding } from './outgoing-state';

export type { DataEnding } from './outgoing-state';

/** What a stream needs of its connection. */
export interface H2Connection {
  readonly closed: boolean;
  readonly destroyed: boolean;
  /** Sends a HEADERS frame (and CONTINUATION frames when it is large) for `stream`. */
  sendHeaders(stream: H2Stream, fields: OutgoingHeaders, isEnd: boolean): void;
  /** Sends or queues DATA within the flow control windows, then what `ending` says. */
  sendData(stream: H2Stream, data: Buffer | undefined, ending: DataEnding): void;
  /** Sends RST_STREAM with `code` and forgets the stream. */
  resetStream(stream: H2Stream, code: number): void;
  /**
   * Counts `bytes` more (fewer, when negative) of a stream's body against the connection's
   * buffer budget, and `requests` more requests holding them; false, counting nothing, when
   * they do not fit. Giving back always succeeds.
   */
  holdBytes(bytes: number, requests: number): boolean;
  /**
   * Counts `requests` more (fewer, when negative) streams whose body has not begun against the
   * buffer budget's totals, under its fair share rule but not the connection's own share; false,
   * counting nothing, when they do not fit. Giving back always succeeds.
   */
  holdWaiting(requests: number): boolean;
  /**
   * Work a stream's handler did beyond reading its frames (a quota report's usages), counted as
   * that many bytes of frames against the connection's turn budget: past it, the connection's
   * next frames wait for a later turn.
   */
  chargeWork(bytes: number): void;
  /**
   * Bytes written and not yet taken by the client: what its socket queues, and what waits to
   * be handed to it.
   */
  readonly unsentBytes: number;
  /** Calls `listener` once, when the socket has handed the client all it held, or closed. */
  onceDrained(listener: () => void): void;
  /**
   * GOAWAY with `code`, then the connection is cut at once, dropping what waits to be sent:
   * for a client that does not read what it is sent.
   */
  cut(code: number): void;
}

export interface RespondOptions {
  readonly endStream?: boolean;
  /** Emit 'wantTrailers' once the data has been sent, for sendTrailers(). */
  readonly waitForTrailers?: boolean;
}

const IMPLICIT_HEADERS: OutgoingHeaders = Object.freeze({ ':status': 200 });

export class H2Stream extends EventEmitter {
  /** DATA waiting for window and what follows it: the send side's. */
  readonly outgoing = new OutgoingState();
  /** The client's half: END_STREAM, receive window, content-length: the reader side's. */
  readonly incoming: IncomingState;
  private isHeadersSent = false;
  private isClosed = false;
  private status: string | undefined = undefined;
  /** end() or an ending respond() was called: nothing more is written. */
  private isLocalEnded = false;
  private isWaitingForTrailers = false;
  private isTrailersSent = false;
  /** What the stream's reader keeps of the body, counted against the buffer budget. */
  private heldBytes = 0;
  /** Counted as a request held while its body has not begun (holdUntilBody). */
  private isAwaitingBody = false;

  constructor(
    readonly id: number,
    readonly session: H2Connection,
    receiveWindow: number,
    expectedBytes: number | undefined,
  ) {
    super();
    this.incoming = new IncomingState(receiveWindow, expectedBytes);
  }

  get headersSent(): boolean {
    return this.isHeadersSent;
  }

  /** Nothing more will be sent or read: answered in full, reset, or its connection gone. */
  get closed(): boolean {
    return this.isClosed;
  }

  get destroyed(): boolean {
    return this.isClosed;
  }

  /** The grpc-status this stream was answered with, once it was. */
  get sentStatus(): string | undefined {
    return this.status;
  }

  /** Bytes of the body written and waiting for flow control window: a streaming call's bound. */
  get bufferedBytes(): number {
    return this.outgoing.queuedBytes;
  }

  /**
   * The stream's reader keeps `bytes` of the body received so far (an unfinished message),
   * counted against the connection's buffer budget, as one request holding bytes while above 0.
   * A body nobody keeps costs nothing. False when they do not fit the connection's share or the
   * totals: the stream is then refused with REFUSED_STREAM (the client may send it again; it
   * was not processed) and closes, and the reader lets its bytes go.
   */
  keepOnly(bytes: number): boolean {
    if (this.isClosed) return false;
    // The reader keeps what it needs of a body that has begun: it counts from now on.
    this.bodyBegan();
    const held = this.heldBytes;
    if (bytes === held) return true;
    const requests = (bytes > 0 ? 1 : 0) - (held > 0 ? 1 : 0);
    if (!this.session.holdBytes(bytes - held, requests)) {
      this.close(ErrorCode.REFUSED_STREAM);
      return false;
    }
    this.heldBytes = bytes;
    return true;
  }

  /**
   * The read that opened the stream ended before its body began: from now on it holds a
   * request of the buffer budget (what a stream and its call's state cost, with no byte
   * kept), until its body begins or it closes. Past the budget the stream is refused with
   * REFUSED_STREAM, unprocessed.
   */
  holdUntilBody(): void {
    if (this.isClosed || this.isAwaitingBody || this.heldBytes > 0) return;
    if (this.incoming.remoteEnded || this.incoming.bodyBytes > 0) return;
    if (!this.session.holdWaiting(1)) {
      this.close(ErrorCode.REFUSED_STREAM);
      return;
    }
    this.isAwaitingBody = true;
  }

  /** Body bytes (or its end) arrived: the reader counts what it keeps from now on. */
  bodyBegan(): void {
    if (!this.isAwaitingBody) return;
    this.isAwaitingBody = false;
    this.session.holdWaiting(-1);
  }

  /** The stream table's call when the stream is done: its queued DATA is dropped. */
  markClosed(): void {
    this.isClosed = true;
    this.outgoing.drop();
    this.bodyBegan();
    const held = this.heldBytes;
    if (held > 0) {
      this.heldBytes = 0;
      this.session.holdBytes(-held, -1);
    }
  }

  respond(fields: OutgoingHeaders, options?: RespondOptions): void {
    if (this.isClosed) return;
    if (this.isHeadersSent) throw new Error(`stream ${String(this.id)} already sent its headers`);
    this.isHeadersSent = true;
    const isEnd = options?.endStream === true;
    this.isWaitingForTrailers = !isEnd && options?.waitForTrailers === true;
    this.noteStatus(fields);
    if (isEnd) this.isLocalEnded = true;
    this.session.sendHeaders(this, fields, isEnd);
  }

  /** Sends one chunk of the body; a stream not yet answered is answered 200 first. */
  write(data: Buffer): boolean {
    if (this.isClosed || this.isLocalEnded) return false;
    if (!this.isHeadersSent) this.respond(IMPLICIT_HEADERS);
    this.session.sendData(this, data, undefined);
    return true;
  }

  /** Ends the body: the trailers follow when respond() asked to wait for them. */
  end(data?: Buffer): void {
    if (this.isClosed || this.isLocalEnded) return;
    // DATA before HEADERS would break the protocol: answer 200 first, as node:http2 does.
    if (!this.isHeadersSent) this.respond(IMPLICIT_HEADERS);
    this.isLocalEnded = true;
    this.session.sendData(this, data, this.isWaitingForTrailers ? 'trailers' : 'end');
  }

  /** The connection's call once the body has left and trailers are wanted. */
  wantTrailers(): void {
    this.isWaitingForTrailers = false;
    this.emit('wantTrailers');
    // A listener that sent none: END_STREAM on an empty DATA frame, as node:http2 does.
    if (!this.isClosed && !this.isTrailersSent) this.session.sendData(this, undefined, 'end');
  }

  sendTrailers(fields: OutgoingHeaders): void {
    if (this.isClosed || this.isTrailersSent) return;
    this.isTrailersSent = true;
    this.noteStatus(fields);
    this.session.sendHeaders(this, fields, true);
  }

  /** Resets the stream (RST_STREAM with `code`, NO_ERROR unless given). */
  close(code: number = ErrorCode.NO_ERROR): void {
    if (this.isClosed) return;
    this.session.resetStream(this, code);
  }

  private noteStatus(fields: OutgoingHeaders): void {
    const status = fields['grpc-status'];
    if (status !== undefined) this.status = String(status);
  }
}
