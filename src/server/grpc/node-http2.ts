// The gRPC layer on node:http2 instead of the service's own HTTP/2 (GRPC_HTTP2=node): each
// node session and stream is handed to the layer as the H2Session and H2Stream it serves.
//
// A stream is a real H2Stream whose connection (H2Connection) turns its respond, write, end,
// trailers and reset into the node stream's calls, and node's events into its own; a
// session is a small emitter with the members the layer uses of an H2Session (the close and
// destroy of connection ageing and drain, the socket of the TLS client check). Nothing here
// knows how the own HTTP/2 works inside: it meets the layer where the own one does.
import { EventEmitter } from 'node:events';
import http2 from 'node:http2';
import type net from 'node:net';
import type tls from 'node:tls';
import { ignore } from '../../lib/ignore';
import {
  ConnectionBudget,
  H2Stream,
  type BufferBudget,
  type H2Connection,
  type H2Handlers,
  type H2Headers,
  type H2Session,
  type H2SessionOptions,
  type OutgoingHeaders,
  whenDrained,
} from '../h2';

/** What follows a stream's DATA: its end, its trailers, or (undefined) more DATA. */
type DataEnding = Parameters<H2Connection['sendData']>[2];

/** What the gRPC layer uses of an H2Session; the node session offers these and no more. */
type SessionSurface = Pick<
  H2Session,
  'closed' | 'destroyed' | 'close' | 'destroy' | 'socket' | 'useBudget'
> &
  EventEmitter;

// No Date header, as on the own HTTP/2: gRPC has no use for it. Node reads sendDate though
// its type does not name it.
const END_STREAM = Object.freeze({
  endStream: true,
  sendDate: false,
});
// Always wait for trailers: whether the body ends with trailers is known only at its end.
const WAIT_FOR_TRAILERS = Object.freeze({
  waitForTrailers: true,
  sendDate: false,
});
const NO_TRAILERS: OutgoingHeaders = Object.freeze({});
const { NGHTTP2_NO_ERROR, NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE, NGHTTP2_STREAM_STATE_CLOSED } =
  http2.constants;

/**
 * A trailers-only answer is complete: a request still open (a streaming call refused with a
 * status) is asked to stop with RST_STREAM(NO_ERROR), as RFC 9113 §8.1 lets a server do and
 * the own HTTP/2 does; node would hold the stream half-closed until the client ends it. After
 * a body and trailers node's RST_STREAM can overtake the trailers (seen in
 * test/unit/quota/rlqs-method.test.ts), so there the client ends the stream, as every gRPC
 * client does on trailers.
 *
 * The RST_STREAM waits for the next turn of the event loop: nghttp2 drops a HEADERS frame it
 * has not sent yet when the stream is reset (nghttp2/nghttp2#692). Up to Node 26.7 node wrote
 * the HEADERS before the reset it was asked for in the same turn; from 26.8 it does not, and
 * the client saw its stream reset with no status (26.7.0 and 26.8.0 run side by side, and
 * test/unit/server/grpc-node-http2.test.ts). By the next turn the HEADERS are written.
 */
function endIfRequestOpen(node: http2.ServerHttp2Stream): void {
  setImmediate(() => {
    if (node.destroyed || node.closed) return;
    const { state } = node.state;
    if (state === NGHTTP2_STREAM_STATE_HALF_CLOSED_REMOTE || state === NGHTTP2_STREAM_STATE_CLOSED)
      return;
    node.close(NGHTTP2_NO_ERROR);
  });
}

/** A node stream as the H2Stream the gRPC layer serves. */
class NodeStream extends H2Stream {
  /** The body ends with trailers (the layer's 'wantTrailers' listener sends them). */
  isTrailersWanted = false;
  /** A DATA frame has come: the stream holds no waiting request (node counts no body bytes). */
  hasBodyBegun = false;

  constructor(
    readonly node: http2.ServerHttp2Stream,
    connection: NodeConnection,
  ) {
    super(node.id ?? 0, connection, 0, undefined);
    node.on('data', (chunk: Buffer) => {
      this.hasBodyBegun = true;
      this.bodyBegan();
      this.emit('data', chunk);
    });
    node.once('end', () => {
      this.incoming.end();
      this.emit('end');
    });
    node.on('wantTrailers', () => {
      if (this.isTrailersWanted) this.wantTrailers();
      else node.sendTrailers(NO_TRAILERS);
    });
    // Node reports a peer gone or misbehaving as an error; 'close' follows and ends everything.
    node.on('error', ignore);
    node.once('close', () => {
      this.markClosed();
      this.emit('close');
    });
  }

  /** Node holds the body's bytes waiting for window in the node stream. */
  override get bufferedBytes(): number {
    return this.node.writableLength;
  }

  /** As on the own HTTP/2: past the read that opened it, a stream without a body holds one. */
  override holdUntilBody(): void {
    if (!this.hasBodyBegun) super.holdUntilBody();
  }
}

function nodeOf(stream: H2Stream): http2.ServerHttp2Stream {
  if (stream instanceof NodeStream) return stream.node;
  throw new Error(`stream ${String(stream.id)} is not a node:http2 stream`);
}

/** A node session as the connection of its streams and the session the gRPC layer tracks. */
class NodeConnection extends EventEmitter implements H2Connection, SessionSurface {
  /** What the streams' readers keep of unfinished bodies; none until the server gives one. */
  private budget: ConnectionBudget | undefined = undefined;
  /** Streams opened in this turn, looked at once it ends (holdOpened). */
  private opening: NodeStream[] = [];

  constructor(private readonly node: http2.ServerHttp2Session) {
    super();
    node.on('error', ignore);
    node.once('remoteSettings', () => this.emit('remoteSettings'));
    node.once('close', () => {
      this.budget?.giveAll();
      this.emit('close');
    });
  }

  get closed(): boolean {
    return this.node.closed;
  }

  get destroyed(): boolean {
    return this.node.destroyed;
  }

  get socket(): net.Socket {
    // A proxy that forbids reading and writing, and lends the rest (the peer certificate).
    return this.node.socket;
  }

  /** GOAWAY: calls in flight finish, no new ones start. */
  close(): void {
    if (!this.node.closed) this.node.close();
  }

  destroy(): void {
    this.node.destroy();
  }

  /**
   * Counts what the streams' readers keep of unfinished bodies against `budget`, as the own
   * HTTP/2 does; node bounds what it buffers itself by maxSessionMemory.
   */
  useBudget(budget: BufferBudget): void {
    this.budget = new ConnectionBudget(budget, this.node.socket.remoteAddress ?? 'unix');
  }

  holdBytes(bytes: number, requests: number): boolean {
    return this.budget === undefined || this.budget.take(bytes, requests);
  }

  holdWaiting(requests: number): boolean {
    return this.budget === undefined || this.budget.takeWaiting(requests);
  }

  /** What node has handed its socket and the client has not taken (nghttp2's own queue aside). */
  get unsentBytes(): number {
    return this.node.socket.writableLength;
  }

  onceDrained(listener: () => void): void {
    // The session's socket proxy lends on/off; it forbids writing and reading only.
    whenDrained(this.node.socket, listener);
  }

  cut(code: number): void {
    if (this.node.destroyed) return;
    this.node.goaway(code);
    this.node.destroy();
  }

  /** node:http2 reads what a socket read gives it: it has no turn budget to count against. */
  chargeWork(): void {
    // Nothing to count against.
  }

  sendHeaders(stream: H2Stream, fields: OutgoingHeaders, isEnd: boolean): void {
    const node = nodeOf(stream);
    if (node.destroyed) return;
    if (node.headersSent) node.sendTrailers(fields);
    else if (!isEnd) node.respond(fields, WAIT_FOR_TRAILERS);
    else {
      node.respond(fields, END_STREAM);
      endIfRequestOpen(node);
    }
  }

  sendData(stream: H2Stream, data: Buffer | undefined, ending: DataEnding): void {
    const node = nodeOf(stream);
    if (node.destroyed) return;
    if (ending === undefined) {
      if (data !== undefined) node.write(data);
      return;
    }
    // The layer's wantTrailers listener sent none: end the stream with an empty trailer block.
    if (node.writableEnded) {
      node.sendTrailers(NO_TRAILERS);
      return;
    }
    if (stream instanceof NodeStream) stream.isTrailersWanted = ending === 'trailers';
    if (data === undefined) node.end();
    else node.end(data);
  }

  resetStream(stream: H2Stream, code: number): void {
    const node = nodeOf(stream);
    stream.markClosed();
    if (!node.destroyed) node.close(code);
  }

  /** Streams of this session, with their request headers, to `onStream`. */
  serve(onStream: H2Handlers['stream']): void {
    this.node.on('stream', (stream, headers) => {
      const opened = new NodeStream(stream, this);
      this.opening.push(opened);
      if (this.opening.length === 1) setImmediate(holdHeaderOnly, this);
      onStream(opened, flatHeaders(headers));
    });
  }

  /**
   * Streams opened in the turn that just ended whose body has not begun count as requests
   * held, refused REFUSED_STREAM past the budget, as the own HTTP/2 counts them at the end of
   * its read (h2/stream-table.ts): node hands over what one socket read held in one turn, and a
   * request whose DATA came with its HEADERS has had it by the next.
   */
  holdOpened(): void {
    const opened = this.opening;
    this.opening = [];
    for (const stream of opened) stream.holdUntilBody();
  }
}

function holdHeaderOnly(connection: NodeConnection): void {
  connection.holdOpened();
}

/** Node's request headers as the own HTTP/2 gives them: one string per name. */
function flatHeaders(headers: http2.IncomingHttpHeaders): H2Headers {
  const out: H2Headers = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.join(', ');
  }
  return out;
}

/** The node:http2 server options for the own HTTP/2's settings. */
export function nodeHttp2Options(options: H2SessionOptions): http2.ServerOptions {
  return {
    settings: {
      maxConcurrentStreams: options.maxConcurrentStreams,
      maxHeaderListSize: options.maxHeaderListBytes,
    },
  };
}

/** A plaintext node:http2 server (HTTP/2 with prior knowledge, as gRPC speaks it). */
export function createNodeHttp2Server(options: H2SessionOptions): http2.Http2Server {
  return http2.createServer(nodeHttp2Options(options));
}

/** A node:http2 server over TLS with `tlsOptions` (ALPN h2 only: no HTTP/1.1 fallback). */
export function createNodeHttp2SecureServer(
  options: H2SessionOptions,
  tlsOptions: tls.TlsOptions,
): http2.Http2SecureServer {
  return http2.createSecureServer({ ...tlsOptions, ...nodeHttp2Options(options) });
}

/**
 * Hands `server`'s sessions and streams to the gRPC layer's handlers, as acceptH2 does for
 * the own HTTP/2. The session is passed as an H2Session: it has what the layer uses of one.
 */
export function serveOnNodeHttp2(
  server: http2.Http2Server | http2.Http2SecureServer,
  handlers: H2Handlers,
): void {
  server.on('session', (node: http2.ServerHttp2Session) => {
    const connection = new NodeConnection(node);
    const session: SessionSurface = connection;
    handlers.session(session as H2Session);
    connection.serve((stream, headers) => {
      handlers.stream(stream, headers);
    });
  });
}
