// One HTTP/2 connection, server side (RFC 9113): reads frames, keeps the streams, HPACK and
// flow control in step with the client, and writes what the streams send. Events, as
// node:http2's ServerHttp2Session has them: 'remoteSettings' (the client's first SETTINGS),
// 'close' (the socket closed); streams go to the `onStream` callback.
import { EventEmitter } from 'node:events';
import type net from 'node:net';
import { ConnectionBudget, processBudget, type BufferBudget } from './buffer-budget';
import {
  checkLength,
  ConnectionError,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FrameType,
  MAX_WINDOW,
} from './frames';
import type { H2Headers } from './hpack';
import { CONNECTION_WINDOW, ReceiveSide } from './receive-side';
import { ConnectionLimits } from './limits';
import { endSocketSoon, whenDrained } from './drained';
import { Output } from './output';
import { FrameReader } from './reader';
import { SendSide } from './send-side';
import { isSettingsAck, settingsPayload } from './settings-frame';
import type { H2Stream } from './stream';
import { StreamTable } from './stream-table';

export interface H2SessionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS (GRPC_MAX_CONCURRENT_STREAMS). */
  readonly maxConcurrentStreams: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE: larger requests are answered 431. */
  readonly maxHeaderListBytes: number;
  /** Where unfinished requests are counted; the process's default budget if unset. */
  readonly budget?: BufferBudget;
}

export type StreamListener = (stream: H2Stream, headers: H2Headers) => void;

/** Reading stops while this much output waits for the client to read (PING/SETTINGS floods). */
const PAUSE_OUTPUT_BYTES = 1024 * 1024;
/**
 * The frame bytes one connection is read in a turn before the others get theirs: a flood of
 * small frames, or a thousand calls at once, holds the others up about a millisecond at a time.
 */
const TURN_BYTES = 64 * 1024;
/** What a HEADERS frame counts for against TURN_BYTES: opening a stream costs about that. */
const STREAM_OPEN_BYTES = 1024;
/** How long the first GOAWAY waits for its PING's answer before the final one goes. */
const GOAWAY_PING_MS = 1000;
/** The opaque data of the PING that follows the first GOAWAY. */
const GOAWAY_PING = Buffer.from('goaway!!', 'latin1');

export class H2Session extends EventEmitter {
  /** No new calls are wanted: a GOAWAY went (or is going) out, or the connection is gone. */
  closed = false;
  destroyed = false;
  /** Streams above this id are ignored: the final GOAWAY named the last one processed. */
  lastAcceptedId = MAX_WINDOW;
  private readonly output: Output;
  private readonly send: SendSide;
  private readonly streams: StreamTable;
  private readonly reader: FrameReader;
  private readonly receive: ReceiveSide;
  private readonly limits = new ConnectionLimits((bytes) => {
    this.reader.charge(bytes);
  });
  private budget: ConnectionBudget;
  private isSettingsSeen = false;
  private isFinalGoawaySent = false;
  private goawayTimer: NodeJS.Timeout | undefined = undefined;
  private isReading = false;
  private isFlushScheduled = false;
  /** Reading stopped until the client reads what waits for it. */
  private isPaused = false;
  /** Reading stopped until the next turn of the event loop. */
  private isYielding = false;

  constructor(
    readonly socket: net.Socket,
    options: H2SessionOptions,
    onStream: StreamListener,
  ) {
    super();
    this.output = new Output(socket);
    this.budget = new ConnectionBudget(options.budget ?? processBudget, this.peer);
    const { maxConcurrentStreams, maxHeaderListBytes } = options;
    this.streams = new StreamTable(
      this,
      this.output,
      maxConcurrentStreams,
      maxHeaderListBytes,
      this.limits,
      onStream,
    );
    this.receive = new ReceiveSide(
      this.output,
      this.streams,
      this.limits,
      () => this.budget,
      maxHeaderListBytes,
    );
    this.send = new SendSide(this.output, this.streams, this.limits, () => {
      this.scheduleFlush();
    });
    this.reader = new FrameReader(
      DEFAULT_MAX_FRAME,
      (type, flags, stream, payload) => {
        this.onFrame(type, flags, stream, payload);
      },
      TURN_BYTES,
      this.peer,
    );
    this.output.frame(FrameType.SETTINGS, 0, 0, settingsPayload(options));
    this.output.frameOfWords(FrameType.WINDOW_UPDATE, 0, CONNECTION_WINDOW - DEFAULT_WINDOW);
    this.output.flush();
    socket.on('data', (chunk: Buffer) => {
      this.readFrames(chunk);
    });
    socket.on('error', () => {
      // 'close' follows and ends everything.
    });
    socket.once('close', () => {
      this.onSocketClose();
    });
  }

  /** Bytes read for this connection into the shared read buffer: valid only during the call. */
  received(bytes: Buffer): void {
    this.readFrames(bytes);
  }

  /** Counts this connection's unfinished requests against `budget`; before any frame is read. */
  useBudget(budget: BufferBudget): void {
    this.budget.giveAll();
    this.budget = new ConnectionBudget(budget, this.peer);
  }

  /** The client's address, its peer in the buffer budget's fair share rule. */
  get peer(): string {
    return this.socket.remoteAddress ?? 'unix';
  }

  /** The send side, for the streams (H2Connection). */
  sendHeaders: SendSide['sendHeaders'] = (stream, fields, isEnd) => {
    this.send.sendHeaders(stream, fields, isEnd);
  };
  sendData: SendSide['sendData'] = (stream, data, ending) => {
    this.send.sendData(stream, data, ending);
  };
  holdBytes = (bytes: number, requests: number): boolean => this.budget.take(bytes, requests);
  holdWaiting = (requests: number): boolean => this.budget.takeWaiting(requests);
  chargeWork = (bytes: number): void => {
    this.reader.charge(bytes);
  };
  resetStream = (stream: H2Stream, code: number): void => {
    this.streams.reset(stream, code);
    this.scheduleFlush();
  };

  /**
   * A graceful GOAWAY in two phases, as gRPC servers send it: first one naming stream 2^31-1
   * and a PING; when the PING comes back (or after a bound) the final one naming the last
   * stream taken. Streams the client sent meanwhile are served; calls in flight finish; the
   * socket ends once they have.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.output.frameOfWords(FrameType.GOAWAY, 0, MAX_WINDOW, ErrorCode.NO_ERROR);
    this.output.frame(FrameType.PING, 0, 0, GOAWAY_PING);
    this.scheduleFlush();
    this.goawayTimer = setTimeout(() => {
      this.finalGoaway();
    }, GOAWAY_PING_MS);
    this.goawayTimer.unref();
  }

  get unsentBytes(): number {
    return this.socket.writableLength + this.output.pendingBytes;
  }

  onceDrained(listener: () => void): void {
    whenDrained(this.socket, listener);
  }

  cut(code: number): void {
    if (this.destroyed) return;
    this.output.frameOfWords(FrameType.GOAWAY, 0, this.streams.lastId, code);
    this.flush();
    clearTimeout(this.goawayTimer);
    this.closed = true;
    // Not ended, to wait for a FIN: the client does not read, and what it left unread goes now.
    this.socket.destroy();
  }

  /** Cuts the connection now; its streams close unanswered. */
  destroy(): void {
    if (this.destroyed) return;
    this.closed = true;
    this.socket.destroy();
  }

  /** The stream table's call when a stream finished: a closing connection may now end. */
  endIfIdle(): void {
    if (this.isFinalGoawaySent && !this.destroyed && this.streams.size === 0) {
      this.flush();
      this.destroyed = true;
      endSocketSoon(this.socket);
    }
  }

  /** The stream table's call when a stream closed (what it held went back in markClosed). */
  streamClosed(stream: H2Stream): void {
    this.send.forget(stream);
  }

  private finalGoaway(): void {
    clearTimeout(this.goawayTimer);
    this.closed = true;
    if (this.isFinalGoawaySent || this.destroyed) return;
    this.isFinalGoawaySent = true;
    this.lastAcceptedId = this.streams.lastId;
    this.output.frameOfWords(FrameType.GOAWAY, 0, this.lastAcceptedId, ErrorCode.NO_ERROR);
    this.scheduleFlush();
    this.endIfIdle();
  }

  /** This connection has had its turn: the rest of what it sent is read in the next one. */
  private yieldTurn(): void {
    if (this.isYielding || this.destroyed) return;
    this.isYielding = true;
    this.socket.pause();
    this.reader.waitTurn(this);
  }

  /** The next turn: what waited is read, and reading goes on unless the output is full. */
  resumeTurn(): void {
    this.isYielding = false;
    this.readFrames(undefined);
    if (!this.reader.isHeld) this.readOn();
  }

  /** Reading goes on unless the output is full or the connection is gone. */
  private readOn(): void {
    if (!this.isPaused && !this.destroyed) this.socket.resume();
  }

  /** Reads `chunk`, or (undefined) what waited for this turn; flushes what the frames wrote. */
  private readFrames(chunk: Buffer | undefined): void {
    if (this.destroyed) return;
    this.isReading = true;
    try {
      if (chunk === undefined) this.reader.resume();
      else this.reader.read(chunk);
    } catch (err: unknown) {
      this.failConnection(err);
    } finally {
      this.isReading = false;
    }
    // Streams whose body did not begin in what was read count as requests held from now on.
    this.streams.holdHeaderOnly();
    this.flush();
    if (this.reader.isHeld) this.yieldTurn();
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.destroyed) return;
    if (!this.isSettingsSeen && (type !== FrameType.SETTINGS || (flags & Flag.ACK) !== 0)) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
    }
    const open = this.receive.openBlockStream;
    if (open !== 0 && (type !== FrameType.CONTINUATION || stream !== open)) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a header block was interrupted');
    }
    switch (type) {
      case FrameType.DATA:
        this.receive.onDataFrame(flags, stream, payload);
        return;
      case FrameType.HEADERS:
        this.reader.chargeOpening(STREAM_OPEN_BYTES);
        this.receive.onHeaders(flags, stream, payload);
        return;
      case FrameType.CONTINUATION:
        this.receive.onContinuation(flags, stream, payload);
        return;
      case FrameType.PRIORITY:
        this.receive.onPriority(stream, payload);
        return;
      case FrameType.RST_STREAM:
        checkLength(payload, 4, stream);
        this.streams.resetByClient(stream);
        return;
      case FrameType.SETTINGS:
        this.onSettings(flags, stream, payload);
        return;
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a client sent PUSH_PROMISE');
      case FrameType.PING:
        this.onPing(flags, stream, payload);
        return;
      case FrameType.GOAWAY:
        if (stream !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'GOAWAY on a stream');
        if (payload.length < 8)
          throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a short GOAWAY');
        // The client opens no more streams: those open finish, then the socket ends.
        this.finalGoaway();
        return;
      case FrameType.WINDOW_UPDATE:
        checkLength(payload, 4, stream);
        this.send.windowUpdate(stream, payload.readUInt32BE(0) & 0x7fffffff);
        return;
      default:
        // Unknown frame types are ignored (section 5.5).
        return;
    }
  }

  private onSettings(flags: number, stream: number, payload: Buffer): void {
    if (isSettingsAck(flags, stream, payload)) return;
    for (let at = 0; at < payload.length; at += 6) {
      this.send.applySetting(payload.readUInt16BE(at), payload.readUInt32BE(at + 2));
    }
    this.limits.ackQueued();
    this.output.frame(FrameType.SETTINGS, Flag.ACK, 0);
    if (!this.isSettingsSeen) {
      this.isSettingsSeen = true;
      this.emit('remoteSettings');
    }
  }

  private onPing(flags: number, stream: number, payload: Buffer): void {
    if (stream !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
    checkLength(payload, 8, 0);
    if ((flags & Flag.ACK) !== 0) {
      if (payload.equals(GOAWAY_PING)) this.finalGoaway();
      return;
    }
    this.limits.ackQueued();
    this.output.frame(FrameType.PING, Flag.ACK, 0, payload);
  }

  /** A connection error: GOAWAY with its code, then the socket ends. */
  private failConnection(err: unknown): void {
    const code = err instanceof ConnectionError ? err.code : ErrorCode.INTERNAL_ERROR;
    if (!this.destroyed) {
      this.output.frameOfWords(FrameType.GOAWAY, 0, this.streams.lastId, code);
      this.flush();
    }
    clearTimeout(this.goawayTimer);
    this.closed = true;
    this.destroyed = true;
    this.socket.pause();
    this.reader.discard();
    endSocketSoon(this.socket);
    if (!(err instanceof ConnectionError)) this.emit('error', err);
  }

  private scheduleFlush(): void {
    if (this.isReading || this.isFlushScheduled) return;
    this.isFlushScheduled = true;
    process.nextTick(flushLater, this);
  }

  /** Writes what the streams sent, then tells the streams that finished. */
  flush(): void {
    this.isFlushScheduled = false;
    if (this.socket.destroyed) return;
    this.output.flush();
    this.streams.announceClosed();
    if (this.output.pendingBytes > 0) this.output.flush();
    if (this.socket.writableLength === 0) this.limits.acksDelivered();
    if (!this.isPaused && this.socket.writableLength > PAUSE_OUTPUT_BYTES) {
      this.isPaused = true;
      this.socket.pause();
      this.socket.once('drain', () => {
        this.isPaused = false;
        this.limits.acksDelivered();
        if (!this.destroyed && !this.isYielding) this.socket.resume();
      });
    }
  }

  private onSocketClose(): void {
    clearTimeout(this.goawayTimer);
    this.closed = true;
    this.destroyed = true;
    this.streams.closeAll();
    this.receive.close();
    this.budget.giveAll();
    this.reader.leavePeer();
    this.emit('close');
  }
}

function flushLater(session: H2Session): void {
  session.flush();
}
