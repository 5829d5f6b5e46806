// The limit: a bare node:http2 server that reads each call's body and answers a constant gRPC
// frame, with no decoding and no framework. No gRPC server on Node's http2 can do less per call.
import http2 from 'node:http2';
import { loadPackageDefinition } from '../src/lib/proto';
import { ignore } from '../src/lib/ignore';
import { RESPONSE } from './noop-server';

const rls = loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
  'envoy.service.ratelimit.v3.RateLimitService'
] as unknown as { ShouldRateLimit: { responseSerialize: (value: unknown) => Buffer } };

/** The no-op grpc-js server's answer, framed once. */
function constantFrame(): Buffer {
  const message = rls.ShouldRateLimit.responseSerialize(RESPONSE);
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

// The same shared header objects, options and trailers the service sends
// (src/server/grpc/replies.ts), without its grpc-accept-encoding: no Date either.
const HEADERS = Object.freeze({ ':status': 200, 'content-type': 'application/grpc' });
const TRAILERS = Object.freeze({ 'grpc-status': '0' });
const WAIT_FOR_TRAILERS = Object.freeze({ waitForTrailers: true, sendDate: false });

function sendTrailers(this: http2.ServerHttp2Stream): void {
  this.sendTrailers(TRAILERS);
}

/** The limit server, answering every call with the no-op grpc-js server's constant answer. */
export function createLimitServer(): http2.Http2Server {
  const frame = constantFrame();
  const server = http2.createServer();
  server.on('stream', (stream) => {
    stream.on('error', ignore);
    // The body is not decoded: the limit only reads it to its end.
    stream.on('data', ignore);
    stream.once('end', () => {
      stream.respond(HEADERS, WAIT_FOR_TRAILERS);
      stream.once('wantTrailers', sendTrailers);
      stream.end(frame);
    });
  });
  server.on('sessionError', ignore);
  return server;
}

if (require.main === module) {
  // Exiting through process.exit lets `node --cpu-prof` write its profile.
  process.once('SIGTERM', () => process.exit(0));
  const server = createLimitServer();
  server.listen(Number(process.argv[2] ?? '0'), '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`listening ${typeof address === 'object' ? address?.port : ''}\n`);
  });
}
