// An HTTP/2 server on src/server/h2 with an echo handler, for the transport's own tests.
import net from 'node:net';
import { acceptH2, type BufferBudget, type H2Session } from '../../src/server/h2';

export interface Served {
  readonly port: number;
  readonly sessions: H2Session[];
  /** What the sessions emitted as 'error': exceptions thrown by a handler. */
  readonly errors: unknown[];
  /** Resolves when the server has the next stream. */
  nextStream(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An echo server: answers each stream with its request's byte count (x-received), the request
 * header named by x-echo (as x-echoed), then `reply-bytes` bytes of body and grpc-status 0.
 * Path /hold keeps its body (counted in the buffer budget) and is never answered; /bare ends
 * with a body and no respond(); /throw throws from its data listener.
 */
export async function serveEcho(
  maxConcurrentStreams = 100,
  budget?: BufferBudget,
): Promise<Served> {
  const listener = net.createServer();
  const sessions: H2Session[] = [];
  const errors: unknown[] = [];
  let streamSeen: (() => void) | undefined;
  acceptH2(
    listener,
    false,
    {
      maxConcurrentStreams,
      maxHeaderListBytes: 16 * 1024,
      ...(budget === undefined ? {} : { budget }),
    },
    {
      session: (session) => {
        sessions.push(session);
        session.on('error', (err: unknown) => errors.push(err));
      },
      stream: (stream, headers) => {
        streamSeen?.();
        let received = 0;
        stream.on('data', (chunk: Buffer) => {
          if (headers[':path'] === '/throw') throw new Error('a handler bug');
          received += chunk.length;
          // Kept, as a reader keeps an unfinished body, within the connection's buffer budget.
          if (headers[':path'] === '/hold') stream.keepOnly(received);
        });
        stream.on('end', () => {
          if (headers[':path'] === '/hold') return;
          if (headers[':path'] === '/bare') {
            stream.end(Buffer.from('bare'));
            return;
          }
          const echo = headers['x-echo'];
          stream.respond(
            {
              ':status': 200,
              'x-received': received,
              ...(echo === undefined ? {} : { 'x-echoed': headers[echo] ?? '' }),
            },
            { waitForTrailers: true },
          );
          stream.on('wantTrailers', () => {
            stream.sendTrailers({ 'grpc-status': 0 });
          });
          stream.end(Buffer.alloc(Number(headers['reply-bytes'] ?? '0'), 0x61));
        });
      },
    },
  );
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address() as net.AddressInfo;
  return {
    port: address.port,
    sessions,
    errors,
    nextStream: () =>
      new Promise((resolve) => {
        streamSeen = resolve;
      }),
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => listener.close(resolve));
    },
  };
}
