// How a connection's socket is let go: its drain told once (what waits to be written to a client
// that reads it again), and its end with a bounded wait for the client's FIN.
import type net from 'node:net';

/** Calls `listener` once, when `socket` has written all it held (or closed). */
export function whenDrained(socket: net.Socket, listener: () => void): void {
  const done = (): void => {
    socket.off('drain', done);
    socket.off('close', done);
    listener();
  };
  socket.on('drain', done);
  socket.on('close', done);
}

/** How long a closing connection waits for the client's FIN before it is cut. */
const LINGER_MS = 1000;

/** Ends `socket`, and destroys it if the client has not closed its side within LINGER_MS. */
export function endSocketSoon(socket: net.Socket): void {
  socket.end();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
