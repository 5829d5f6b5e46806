// The call router: checks what every gRPC call must carry, then hands it to its method.
import type { H2Headers, H2Stream, OutgoingHeaders } from '../h2';
import { ignore } from '../../lib/ignore';
import type { LastResort } from '../last-resort';
import { ACCEPT_ENCODING, GrpcStatus, isAcceptedEncoding } from './protocol';
import { answerInternal, sendStatus } from './replies';

/** A grpc-encoding this server reads; undefined is identity. */
export type RequestEncoding = 'identity' | 'gzip' | 'deflate' | undefined;

/** Serves one method; the request message is still to be read from the stream. */
export type MethodHandler = (
  stream: H2Stream,
  headers: H2Headers,
  encoding: RequestEncoding,
) => void;

/** How long a refused request may take to finish sending before it is answered anyway. */
const REFUSAL_WAIT_MS = 10_000;

/**
 * Answers a request that is not a gRPC call with an HTTP status and a line of text, once the
 * client has sent all of it (RFC 9113 section 8.1): the stream stays in step with the client,
 * whose frames meanwhile get the answers its state calls for. One that takes too long is
 * answered and reset with NO_ERROR, as section 8.1 allows.
 */
function refuse(stream: H2Stream, fields: OutgoingHeaders, text: string): void {
  let timer: NodeJS.Timeout | undefined = undefined;
  const answer = (): void => {
    clearTimeout(timer);
    if (stream.closed || stream.headersSent) return;
    stream.respond({ ...fields, 'content-type': 'text/plain; charset=utf-8' });
    stream.end(Buffer.from(`${text}\n`));
  };
  // The refused body is dropped as it comes: the answer waits for its end.
  stream.on('data', ignore);
  stream.once('end', answer);
  stream.once('close', () => {
    clearTimeout(timer);
  });
  timer = setTimeout(answer, REFUSAL_WAIT_MS);
  timer.unref();
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
      refuse(stream, { ':status': 405, allow: 'POST' }, 'gRPC calls are POST requests');
      return;
    }
    const contentType = headers['content-type'];
    if (typeof contentType !== 'string' || !contentType.startsWith('application/grpc')) {
      refuse(
        stream,
        { ':status': 415, accept: 'application/grpc' },
        'gRPC calls are application/grpc',
      );
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
    // Stream errors are the peer going away; the call's own path reports the rest.
    stream.on('error', ignore);
    try {
      route(stream, headers);
    } catch (err: unknown) {
      answerInternal(stream, err, lastResort, 'gRPC call');
    }
  };
}
