// A socket's drain, told once: what waits to be written to a client that reads it again.
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
