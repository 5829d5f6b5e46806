// Plaintext connections are read into one buffer that every connection shares, not into a
// 64 KiB allocation of its own per read. Node allocates each read with malloc, shrinks it to
// what came, and counts it as V8 external memory: under a flood of bytes those chunks brought
// full collections forward (external memory counts against the old generation's limit), and
// their remnants, scattered through glibc's heap, kept RSS up long after the flood had gone.
// The frames are parsed during the read callback, so the buffer is free again when it returns;
// what outlives it (an unfinished frame, a request body still arriving) is copied by its keeper.
//
// Node offers a read buffer of one's own (`onread`) only to sockets it did not accept, so the
// accepted socket's handle is moved into a socket made with one. That uses two fields Node does
// not document (`_handle`, `_server`); where they are not as expected, the accepted socket is
// read as before, through 'data' events.
import net from 'node:net';

/** Node's own read size (libuv's suggestion); a read never brings more. */
const READ_BYTES = 64 * 1024;
const shared = Buffer.allocUnsafeSlow(READ_BYTES);

/**
 * Tests set H2_POISON_READS=1: the buffer is overwritten after every read (and a cut frame's
 * spare buffer once it was read, reader.ts), so a view kept past its read fails loudly rather
 * than by chance, on the next read of another connection.
 */
export const isPoisoned = process.env.H2_POISON_READS === '1';

/** Receives the bytes of one read; `bytes` is valid only during the call. */
export type ReadSink = (bytes: Buffer) => void;

/** The two undocumented fields of an accepted socket this module relies on. */
interface AcceptedInternals {
  _handle?: { useUserBuffer?: unknown } | null;
  _server?: net.Server | null | undefined;
}

function isMovable(socket: net.Socket): boolean {
  const inner = socket as unknown as AcceptedInternals;
  const handle = inner._handle;
  return (
    typeof handle === 'object' &&
    handle !== null &&
    typeof handle.useUserBuffer === 'function' &&
    typeof inner._server === 'object'
  );
}

/**
 * Moves a socket `server` accepted (with pauseOnConnect, so nothing was read yet) into one that
 * reads into the shared buffer and hands each read to `sink()`, which may be set after this
 * returns. The server still counts the connection (server.close() waits for it). Returns
 * undefined, leaving `accepted` untouched, where this Node's sockets cannot be moved.
 */
export function readIntoShared(
  accepted: net.Socket,
  sink: () => ReadSink | undefined,
): net.Socket | undefined {
  if (!isMovable(accepted)) return undefined;
  const inner = accepted as unknown as AcceptedInternals;
  const { _handle: handle, _server: server } = inner;
  // The old socket lets go of both, so that destroying it closes nothing and counts nothing.
  inner._handle = null;
  inner._server = null;
  const options = {
    handle,
    readable: true,
    writable: true,
    onread: {
      buffer: shared,
      callback: (length: number): void => {
        sink()?.(shared.subarray(0, length));
        if (isPoisoned) shared.fill(0xa5, 0, length);
      },
    },
  } as net.SocketConstructorOpts;
  const socket = new net.Socket(options);
  (socket as unknown as AcceptedInternals)._server = server;
  accepted.destroy();
  return socket;
}
