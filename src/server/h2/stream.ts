// One request stream on the server side: what node:http2's ServerHttp2Stream offers a gRPC
// server (respond, write, end, trailers, close and the data/end/close/wantTrailers events) at a
// fraction of its cost, over frames its connection writes.
import { EventEmitter } from 'node:events';
import { ErrorCode } from './frames';
import type { OutgoingHeaders } from './hpack';

/** What follows a stream's queued DATA once it has left. */
export type DataEnding = 'end' | 'trailers' | undefined;

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
}

export interface RespondOptions {
  readonly endStream?: boolean;
  /** Emit 'wantTrailers' once the data has been sent, for sendTrailers(). */
  readonly waitForTrailers?: boolean;
}

const IMPLICIT_HEADERS: OutgoingHeaders = Object.freeze({ ':status': 200 });

export class H2Stream extends EventEmitter {
  headersSent = false;
  /** Nothing more will be sent or read: answered in full, reset, or its connection gone. */
  closed = false;
  /** The grpc-status this stream was answered with, once it was. */
  sentStatus: string | undefined = undefined;
  /** The client sent END_STREAM. */
  isRemoteEnded = false;
  /** end() or an ending respond() was called: nothing more is written. */
  isLocalEnded = false;
  /** Bytes this side may still send on the stream (the client's window for it). */
  sendWindow: number;
  /** Bytes the client may still send on the stream; received bytes not yet given back. */
  receiveWindow: number;
  receivedUncredited = 0;
  /** DATA waiting for window, oldest first. */
  queued: Buffer[] | undefined = undefined;
  /** What follows once `queued` has left. */
  ending: DataEnding = undefined;
  /** END_STREAM has left (on DATA or trailers). */
  isEndSent = false;
  private isWaitingForTrailers = false;
  private isTrailersSent = false;

  constructor(
    readonly id: number,
    readonly session: H2Connection,
    sendWindow: number,
    receiveWindow: number,
  ) {
    super();
    this.sendWindow = sendWindow;
    this.receiveWindow = receiveWindow;
  }

  get destroyed(): boolean {
    return this.closed;
  }

  respond(fields: OutgoingHeaders, options?: RespondOptions): void {
    if (this.closed) return;
    if (this.headersSent) throw new Error(`stream ${String(this.id)} already sent its headers`);
    this.headersSent = true;
    const isEnd = options?.endStream === true;
    this.isWaitingForTrailers = !isEnd && options?.waitForTrailers === true;
    this.noteStatus(fields);
    if (isEnd) this.isLocalEnded = true;
    this.session.sendHeaders(this, fields, isEnd);
  }

  /** Sends one chunk of the body; a stream not yet answered is answered 200 first. */
  write(data: Buffer): boolean {
    if (this.closed || this.isLocalEnded) return false;
    if (!this.headersSent) this.respond(IMPLICIT_HEADERS);
    this.session.sendData(this, data, undefined);
    return true;
  }

  /** Ends the body: the trailers follow when respond() asked to wait for them. */
  end(data?: Buffer): void {
    if (this.closed || this.isLocalEnded) return;
    // DATA before HEADERS would break the protocol: answer 200 first, as node:http2 does.
    if (!this.headersSent) this.respond(IMPLICIT_HEADERS);
    this.isLocalEnded = true;
    this.session.sendData(this, data, this.isWaitingForTrailers ? 'trailers' : 'end');
  }

  /** The connection's call once the body has left and trailers are wanted. */
  wantTrailers(): void {
    this.isWaitingForTrailers = false;
    this.emit('wantTrailers');
    // A listener that sent none: END_STREAM on an empty DATA frame, as node:http2 does.
    if (!this.closed && !this.isTrailersSent) this.session.sendData(this, undefined, 'end');
  }

  sendTrailers(fields: OutgoingHeaders): void {
    if (this.closed || this.isTrailersSent) return;
    this.isTrailersSent = true;
    this.noteStatus(fields);
    this.session.sendHeaders(this, fields, true);
  }

  /** Resets the stream (RST_STREAM with `code`, NO_ERROR unless given). */
  close(code: number = ErrorCode.NO_ERROR): void {
    if (this.closed) return;
    this.session.resetStream(this, code);
  }

  private noteStatus(fields: OutgoingHeaders): void {
    const status = fields['grpc-status'];
    if (status !== undefined) this.sentStatus = String(status);
  }
}
