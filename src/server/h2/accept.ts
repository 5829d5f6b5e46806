// Serves HTTP/2 on a listening socket: every accepted connection (over TLS, one that chose
// "h2" by ALPN) becomes an H2Session.
import type net from 'node:net';
import { TLSSocket } from 'node:tls';
import type { H2Headers } from './hpack';
import { H2Session, type H2SessionOptions } from './session';
import { readIntoShared, type ReadSink } from './shared-reads';
import type { H2Stream } from './stream';

export interface H2Handlers {
  /** A new connection, before any of its frames is read. */
  session(session: H2Session): void;
  /** A new stream, with its request headers; its body follows as events. */
  stream(stream: H2Stream, headers: H2Headers): void;
}

/**
 * Makes `listener` (a net.Server, or a tls.Server when `isSecure`) speak HTTP/2 with prior
 * knowledge, as gRPC does. A TLS client that did not choose h2 is cut: there is no HTTP/1.1 here.
 * A plaintext listener made with `pauseOnConnect` has its connections read into one shared
 * buffer (shared-reads.ts).
 */
export function acceptH2(
  listener: net.Server,
  isSecure: boolean,
  options: H2SessionOptions,
  handlers: H2Handlers,
): void {
  const onStream = (stream: H2Stream, headers: H2Headers): void => {
    handlers.stream(stream, headers);
  };
  listener.on(isSecure ? 'secureConnection' : 'connection', (socket: net.Socket) => {
    // Refused at accept (the connection gate) or gone already.
    if (socket.destroyed) return;
    if (isSecure && (!(socket instanceof TLSSocket) || socket.alpnProtocol !== 'h2')) {
      socket.destroy();
      return;
    }
    let sink: ReadSink | undefined;
    const own = isSecure ? undefined : readIntoShared(socket, () => sink);
    const read = own ?? socket;
    // A listener made with pauseOnConnect leaves a socket it could not move paused.
    if (own === undefined) socket.resume();
    read.setNoDelay(true);
    const session = new H2Session(read, options, onStream);
    if (own !== undefined)
      sink = (bytes) => {
        session.received(bytes);
      };
    handlers.session(session);
  });
}
