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
// read as before, through 'data' events. Their shape is not enough: checkSharedReads() moves a
// socket on a throwaway loopback listener at start-up, and where its server does not count it
// (or the bytes do not come), every connection is read the old way.
import { once } from 'node:events';
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

/** Cleared by checkSharedReads() when moving failed its check or was turned off. */
let isMoveAllowed = true;

/**
 * Moves a socket `server` accepted (with pauseOnConnect, so nothing was read yet) into one that
 * reads into the shared buffer and hands each read to `sink()`, which may be set after this
 * returns. The server still counts the connection (server.close() waits for it). Returns
 * undefined, leaving `accepted` untouched, where this Node's sockets cannot be moved or the
 * start-up check turned moving off.
 */
/** Accepted sockets moved, to the socket that reads for them now. */
const moves = new WeakMap<net.Socket, net.Socket>();

/**
 * The socket `accepted` was moved to, if it was: the accepted one closes at once, and whoever
 * counts open connections (the connection gate) follows the new one instead.
 */
export function movedTo(accepted: net.Socket): net.Socket | undefined {
  return moves.get(accepted);
}

export function readIntoShared(
  accepted: net.Socket,
  sink: () => ReadSink | undefined,
): net.Socket | undefined {
  if (!isMoveAllowed) return undefined;
  return move(accepted, sink);
}

function move(accepted: net.Socket, sink: () => ReadSink | undefined): net.Socket | undefined {
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
      // Returning false would pause the socket (Node's onread contract): always read on.
      callback: (length: number): boolean => {
        sink()?.(shared.subarray(0, length));
        if (isPoisoned) shared.fill(0xa5, 0, length);
        return true;
      },
    },
  } as net.SocketConstructorOpts;
  const socket = new net.Socket(options);
  (socket as unknown as AcceptedInternals)._server = server;
  moves.set(accepted, socket);
  accepted.destroy();
  return socket;
}

/** What checkSharedReads() found: whether connections are moved, and if not, why. */
export interface SharedReadsCheck {
  readonly isOn: boolean;
  /** Why they are not, for the log; empty when they are. */
  readonly why: string;
}

/** How long each step of the check may take; past it, moving is off. */
const CHECK_STEP_MS = 2_000;

/**
 * The start-up self-check: accepts a connection on a loopback listener of its own, moves it as
 * readIntoShared() does, and requires that the server counts it (getConnections), that a byte
 * the client writes reaches the shared buffer, and that server.close() waits for the moved
 * socket and completes once it is gone. Where any of this fails, readIntoShared() moves nothing
 * from then on. `isForcedOff` turns moving off without a check (the tests of the old path).
 */
export async function checkSharedReads(isForcedOff = false): Promise<SharedReadsCheck> {
  if (isForcedOff) {
    isMoveAllowed = false;
    return { isOn: false, why: 'turned off' };
  }
  let why: string;
  try {
    why = await tryMove();
  } catch (err: unknown) {
    why = `the check failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  isMoveAllowed = why === '';
  return { isOn: isMoveAllowed, why };
}

function within<T>(step: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} took more than ${String(CHECK_STEP_MS)} ms`));
    }, CHECK_STEP_MS);
  });
  return Promise.race([step, late]).finally(() => {
    clearTimeout(timer);
  });
}

function connectionsOf(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.getConnections((err, count) => {
      if (err) reject(err);
      else resolve(count);
    });
  });
}

/** One move on a throwaway listener; '' when it behaved, else what went wrong. */
async function tryMove(): Promise<string> {
  const server = net.createServer({ pauseOnConnect: true });
  const sockets: net.Socket[] = [];
  try {
    server.listen(0, '127.0.0.1');
    await within(once(server, 'listening'), 'listening on loopback');
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const { port } = server.address() as net.AddressInfo;
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    sockets.push(client);
    const [socket] = await within(accepted, 'accepting a connection');
    sockets.push(socket);
    let onRead: ReadSink = () => undefined;
    const arrived = new Promise<void>((resolve) => {
      onRead = () => {
        resolve();
      };
    });
    const moved = move(socket, () => onRead);
    if (moved === undefined) return "this Node's accepted sockets lack the fields moved";
    sockets.push(moved);
    if ((await connectionsOf(server)) !== 1) return 'the server does not count a moved socket';
    client.write('x');
    await within(arrived, 'a byte reaching the shared buffer');
    const closing = { isDone: false };
    const closed = new Promise<void>((resolve) => {
      server.close(() => {
        closing.isDone = true;
        resolve();
      });
    });
    await new Promise((resolve) => setImmediate(resolve));
    if (closing.isDone) return 'the server closed without waiting for a moved socket';
    moved.destroy();
    client.destroy();
    await within(closed, 'the server closing once the moved socket was gone');
    return '';
  } finally {
    for (const socket of sockets) socket.destroy();
    if (server.listening) server.close();
  }
}
