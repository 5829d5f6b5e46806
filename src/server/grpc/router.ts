// The call router: checks what every gRPC call must carry, then hands it to its method.
import type { H2Headers, H2Stream } from '../h2';
import type { LastResort } from '../last-resort';
import { ACCEPT_ENCODING, GrpcStatus, isAcceptedEncoding } from './protocol';
import { answerInternal, END_STREAM, sendStatus } from './replies';

/** A grpc-encoding this server reads; undefined is identity. */
export type RequestEncoding = 'identity' | 'gzip' | 'deflate' | undefined;

/** Serves one method; the request message is still to be read from the stream. */
export type MethodHandler = (
  stream: H2Stream,
  headers: H2Headers,
  encoding: RequestEncoding,
) => void;

function ignore(): void {
  // Stream errors are the peer going away; the call's own path reports the rest.
}

/**
 * The server's 'stream' listener: POST with a gRPC content type and a readable encoding, to a
 * path in `methods` (full method names, `/package.Service/Method`); anything else is refused.
 */
export function routeCalls(
  methods: ReadonlyMap<string, MethodHandler>,
  lastResort: LastResort,
): (stream: H2Stream, headers: H2Headers) => void {
  const route = (stream: H2Stream, headers: H2Headers): void => {
    if (headers[':method'] !== 'POST') {
      stream.respond({ ':status': 405, allow: 'POST' }, END_STREAM);
      return;
    }
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': 415, accept: 'application/grpc' }, END_STREAM);
      return;
    }
    const encoding = headers['grpc-encoding'];
    if (!isAcceptedEncoding(encoding)) {
      sendStatus(
        stream,
        GrpcStatus.UNIMPLEMENTED,
        `grpc-encoding ${encoding} is not supported; use one of ${ACCEPT_ENCODING}`,
      );
      return;
    }
    const path = headers[':path'];
    const handler = path === undefined ? undefined : methods.get(path);
    if (handler === undefined) {
      sendStatus(
        stream,
        GrpcStatus.UNIMPLEMENTED,
        `the method ${String(path)} is not implemented by this server`,
      );
      return;
    }
    handler(stream, headers, encoding);
  };
  return (stream, headers) => {
    stream.on('error', ignore);
    try {
      route(stream, headers);
    } catch (err: unknown) {
      answerInternal(stream, err, lastResort, 'gRPC call');
    }
  };
}
