// One HTTP/2 connection, server side (RFC 9113): reads frames, keeps the streams, HPACK and
// flow control in step with the client, and writes what the streams send. Events, as
// node:http2's ServerHttp2Session has them: 'remoteSettings' (the client's first SETTINGS),
// 'close' (the socket closed); streams go to the `onStream` callback.
import { EventEmitter } from 'node:events';
import type net from 'node:net';
import {
  checkLength,
  ConnectionError,
  DEFAULT_MAX_FRAME,
  DEFAULT_TABLE_BYTES,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  FrameType,
  Setting,
  unpadded,
} from './frames';
import { HpackDecoder, type H2Headers } from './hpack';
import { HpackError } from './hpack-error';
import { ConnectionLimits } from './limits';
import { Output } from './output';
import { FrameReader } from './reader';
import { SendSide } from './send-side';
import type { H2Stream } from './stream';
import { StreamTable } from './stream-table';

export interface H2SessionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS (GRPC_MAX_CONCURRENT_STREAMS). */
  readonly maxConcurrentStreams: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE: larger requests are answered 431. */
  readonly maxHeaderListBytes: number;
}

export type StreamListener = (stream: H2Stream, headers: H2Headers) => void;

/** The connection receive window: raised at once, topped up when half is used. */
const CONNECTION_WINDOW = 1024 * 1024;
/** A stream's unread window is given back once this much has arrived and it is still open. */
const STREAM_CREDIT_BYTES = DEFAULT_WINDOW / 2;
/** Reading stops while this much output waits for the client to read (PING/SETTINGS floods). */
const PAUSE_OUTPUT_BYTES = 1024 * 1024;
/** How long a closing connection waits for the client's FIN before it is cut. */
const LINGER_MS = 1000;

/** A header block being read: HEADERS, then CONTINUATION frames until END_HEADERS. */
interface OpenBlock {
  readonly stream: number;
  readonly flags: number;
  readonly fragments: Buffer[];
  bytes: number;
}

function endSocketSoon(socket: net.Socket): void {
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

export class H2Session extends EventEmitter {
  closed = false;
  destroyed = false;
  private readonly output: Output;
  private readonly send: SendSide;
  private readonly streams: StreamTable;
  private readonly reader: FrameReader;
  private readonly decoder: HpackDecoder;
  private readonly limits = new ConnectionLimits();
  private openBlock: OpenBlock | undefined = undefined;
  private isSettingsSeen = false;
  private connectionUncredited = 0;
  private connectionReceiveWindow = CONNECTION_WINDOW;
  private isReading = false;
  private isFlushScheduled = false;
  private isPaused = false;

  constructor(
    readonly socket: net.Socket,
    private readonly options: H2SessionOptions,
    onStream: StreamListener,
  ) {
    super();
    this.output = new Output(socket);
    this.decoder = new HpackDecoder(DEFAULT_TABLE_BYTES, options.maxHeaderListBytes);
    this.streams = new StreamTable(
      this,
      this.output,
      options.maxConcurrentStreams,
      this.limits,
      onStream,
    );
    this.send = new SendSide(this.output, this.streams, () => {
      this.scheduleFlush();
    });
    this.reader = new FrameReader(DEFAULT_MAX_FRAME, (type, flags, stream, payload) => {
      this.onFrame(type, flags, stream, payload);
    });
    this.output.frame(FrameType.SETTINGS, 0, 0, settingsPayload(options));
    this.output.frameOfWords(FrameType.WINDOW_UPDATE, 0, CONNECTION_WINDOW - DEFAULT_WINDOW);
    this.output.flush();
    socket.on('data', (chunk: Buffer) => {
      this.onData(chunk);
    });
    socket.on('error', () => {
      // 'close' follows and ends everything.
    });
    socket.once('close', () => {
      this.onSocketClose();
    });
  }

  /** The send side, for the streams (H2Connection). */
  sendHeaders: SendSide['sendHeaders'] = (stream, fields, isEnd) => {
    this.send.sendHeaders(stream, fields, isEnd);
  };
  sendData: SendSide['sendData'] = (stream, data, ending) => {
    this.send.sendData(stream, data, ending);
  };
  resetStream = (stream: H2Stream, code: number): void => {
    this.streams.reset(stream, code);
    this.scheduleFlush();
  };

  /** GOAWAY: calls in flight finish, no new ones start; the socket ends once they have. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.output.frameOfWords(FrameType.GOAWAY, 0, this.streams.lastId, ErrorCode.NO_ERROR);
    this.scheduleFlush();
    this.endIfIdle();
  }

  /** Cuts the connection now; its streams close unanswered. */
  destroy(): void {
    if (this.destroyed) return;
    this.closed = true;
    this.socket.destroy();
  }

  /** The stream table's call when a stream finished: a closing connection may now end. */
  endIfIdle(): void {
    if (this.closed && !this.destroyed && this.streams.size === 0) {
      this.flush();
      this.destroyed = true;
      endSocketSoon(this.socket);
    }
  }

  private onData(chunk: Buffer): void {
    if (this.destroyed) return;
    this.isReading = true;
    try {
      this.reader.read(chunk);
    } catch (err: unknown) {
      this.failConnection(err);
    } finally {
      this.isReading = false;
    }
    this.flush();
  }

  private onFrame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.destroyed) return;
    if (!this.isSettingsSeen && (type !== FrameType.SETTINGS || (flags & Flag.ACK) !== 0)) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'the first frame is not SETTINGS');
    }
    const block = this.openBlock;
    if (block !== undefined && (type !== FrameType.CONTINUATION || stream !== block.stream)) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a header block was interrupted');
    }
    switch (type) {
      case FrameType.DATA:
        this.onDataFrame(flags, stream, payload);
        return;
      case FrameType.HEADERS:
        this.onHeaders(flags, stream, payload);
        return;
      case FrameType.CONTINUATION:
        this.onContinuation(flags, stream, payload);
        return;
      case FrameType.PRIORITY:
        checkLength(payload, 5, stream);
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
        if (stream !== 0 || payload.length < 8) {
          throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'a malformed GOAWAY');
        }
        this.close();
        return;
      case FrameType.WINDOW_UPDATE:
        checkLength(payload, 4, 0);
        this.send.windowUpdate(stream, payload.readUInt32BE(0) & 0x7fffffff);
        return;
      default:
        // Unknown frame types are ignored (section 5.5).
        return;
    }
  }

  private onDataFrame(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'DATA on stream 0');
    const length = payload.length;
    this.connectionReceiveWindow -= length;
    if (this.connectionReceiveWindow < 0) {
      throw new ConnectionError(ErrorCode.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    }
    // Received bytes are handed on at once (the reader bounds what it keeps), so they are
    // given back at once too.
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
    if (stream === undefined) return;
    stream.receiveWindow -= length;
    if (stream.receiveWindow < 0) {
      this.streams.fail(stream, ErrorCode.FLOW_CONTROL_ERROR);
      return;
    }
    stream.receivedUncredited += length;
    if (!isEnd && stream.receivedUncredited >= STREAM_CREDIT_BYTES) {
      this.output.frameOfWords(FrameType.WINDOW_UPDATE, id, stream.receivedUncredited);
      stream.receiveWindow += stream.receivedUncredited;
      stream.receivedUncredited = 0;
    }
    if (data.length > 0) stream.emit('data', data);
    if (isEnd) this.streams.remoteEnded(stream);
  }

  private onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'HEADERS on stream 0');
    let fragment = unpadded(flags, payload);
    if ((flags & Flag.PRIORITY) !== 0) {
      if (fragment.length < 5) {
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'HEADERS too short for PRIORITY');
      }
      fragment = fragment.subarray(5);
    }
    if ((flags & Flag.END_HEADERS) !== 0) {
      this.onHeaderBlock(flags, id, fragment);
      return;
    }
    this.openBlock = {
      stream: id,
      flags,
      fragments: [Buffer.from(fragment)],
      bytes: fragment.length,
    };
  }

  private onContinuation(flags: number, id: number, payload: Buffer): void {
    const block = this.openBlock;
    if (block === undefined) {
      throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'CONTINUATION without HEADERS');
    }
    block.bytes += payload.length;
    if (block.bytes > 2 * this.options.maxHeaderListBytes) {
      throw new ConnectionError(ErrorCode.ENHANCE_YOUR_CALM, 'a header block far past the limit');
    }
    if (payload.length === 0) this.limits.invalidFrame();
    block.fragments.push(Buffer.from(payload));
    if ((flags & Flag.END_HEADERS) === 0) return;
    this.openBlock = undefined;
    this.onHeaderBlock(block.flags, id, Buffer.concat(block.fragments, block.bytes));
  }

  private onHeaderBlock(flags: number, id: number, block: Buffer): void {
    const isEnd = (flags & Flag.END_STREAM) !== 0;
    const existing = this.streams.get(id);
    let decoded;
    try {
      decoded = this.decoder.decode(block, existing !== undefined);
    } catch (err: unknown) {
      if (err instanceof HpackError)
        throw new ConnectionError(ErrorCode.COMPRESSION_ERROR, err.message);
      throw err;
    }
    if (existing !== undefined) {
      this.streams.trailers(existing, isEnd);
      return;
    }
    this.streams.opened(id, decoded, isEnd, this.options.maxHeaderListBytes, {
      send: this.send.initialWindow,
      receive: DEFAULT_WINDOW,
    });
  }

  private onSettings(flags: number, stream: number, payload: Buffer): void {
    if (stream !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if ((flags & Flag.ACK) !== 0) {
      if (payload.length !== 0) {
        throw new ConnectionError(ErrorCode.FRAME_SIZE_ERROR, 'a SETTINGS ACK with a payload');
      }
      return;
    }
    if (payload.length % 6 !== 0) {
      throw new ConnectionError(
        ErrorCode.FRAME_SIZE_ERROR,
        'SETTINGS of a length not a multiple of 6',
      );
    }
    for (let at = 0; at < payload.length; at += 6) {
      this.send.applySetting(payload.readUInt16BE(at), payload.readUInt32BE(at + 2));
    }
    this.output.frame(FrameType.SETTINGS, Flag.ACK, 0);
    if (!this.isSettingsSeen) {
      this.isSettingsSeen = true;
      this.emit('remoteSettings');
    }
  }

  private onPing(flags: number, stream: number, payload: Buffer): void {
    if (stream !== 0) throw new ConnectionError(ErrorCode.PROTOCOL_ERROR, 'PING on a stream');
    checkLength(payload, 8, 0);
    if ((flags & Flag.ACK) === 0) this.output.frame(FrameType.PING, Flag.ACK, 0, payload);
  }

  /** A connection error: GOAWAY with its code, then the socket ends. */
  private failConnection(err: unknown): void {
    const code = err instanceof ConnectionError ? err.code : ErrorCode.INTERNAL_ERROR;
    if (!this.destroyed) {
      this.output.frameOfWords(FrameType.GOAWAY, 0, this.streams.lastId, code);
      this.flush();
    }
    this.closed = true;
    this.destroyed = true;
    this.socket.pause();
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
    if (!this.isPaused && this.socket.writableLength > PAUSE_OUTPUT_BYTES) {
      this.isPaused = true;
      this.socket.pause();
      this.socket.once('drain', () => {
        this.isPaused = false;
        if (!this.destroyed) this.socket.resume();
      });
    }
  }

  private onSocketClose(): void {
    this.closed = true;
    this.destroyed = true;
    this.streams.closeAll();
    this.emit('close');
  }
}

function flushLater(session: H2Session): void {
  session.flush();
}

/** This side's SETTINGS: six bytes per setting, a 16-bit id and a 32-bit value. */
function settingsPayload(options: H2SessionOptions): Buffer {
  const payload = Buffer.alloc(12);
  payload.writeUInt16BE(Setting.MAX_CONCURRENT_STREAMS, 0);
  payload.writeUInt32BE(options.maxConcurrentStreams, 2);
  payload.writeUInt16BE(Setting.MAX_HEADER_LIST_SIZE, 6);
  payload.writeUInt32BE(options.maxHeaderListBytes, 8);
  return payload;
}
