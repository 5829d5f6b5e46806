// A bare HTTP/2 client for gRPC calls whose bytes, headers and timing a test controls: no
// client-side deadline, unfinished bodies, streams left open.
import http2 from 'node:http2';
import net from 'node:net';

export interface RawAnswer {
  readonly httpStatus: number | undefined;
  readonly grpcStatus: number | undefined;
  readonly grpcMessage: string | undefined;
  readonly body: Buffer;
  /** Milliseconds from the request to the end of the answer. */
  readonly ms: number;
}

/** One gRPC message frame: flag 0, the length, the bytes. */
export function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

export const RLS_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

/** Sends one call on `session` and resolves with whatever came back when the stream closes. */
export function rawCall(
  session: http2.ClientHttp2Session,
  body: Buffer | undefined,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<RawAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const stream = session.request({
      ':method': 'POST',
      ':path': RLS_PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    let httpStatus: number | undefined;
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      httpStatus = h[':status'];
      trailers = h;
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      const status = trailers['grpc-status'];
      const message = trailers['grpc-message'];
      resolve({
        httpStatus,
        grpcStatus: status === undefined ? undefined : Number(status),
        grpcMessage: typeof message === 'string' ? decodeURIComponent(message) : undefined,
        body: Buffer.concat(chunks),
        ms: performance.now() - started,
      });
    });
    if (body === undefined) return;
    stream.end(body);
  });
}

/** `localAddress`: the loopback address to connect from, another peer than 127.0.0.1. */
export function connect(port: number, localAddress?: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(
      `http://127.0.0.1:${port}`,
      localAddress === undefined
        ? {}
        : { createConnection: () => net.connect({ port, host: '127.0.0.1', localAddress }) },
    );
    session.on('error', () => undefined);
    session.once('remoteSettings', () => {
      resolve(session);
    });
    session.once('error', reject);
  });
}
