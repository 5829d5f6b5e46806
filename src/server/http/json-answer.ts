// One /json call from body text to HTTP status and JSON payload, for both HTTP paths.
import type { IncomingHttpHeaders } from 'node:http';
import type { RateLimitEngine, RateLimitResponse } from '../../engine';
import { describeError } from '../../lib/errors';
import { isPromise, type Pending } from '../../lib/pending';
import type { Logger } from '../../lib/logger';
import type { RequestLimits } from '../../settings';
import type { CallSpan, RequestTracer } from '../../tracing';
import { toEdgeError } from '../errors';
import { GrpcStatus } from '../grpc/protocol';
import { requestFromJson, responseToJson } from '../wire/json';

export interface JsonAnswer {
  readonly status: number;
  readonly payload: unknown;
}

/** What answering /json needs besides the body, shared by both HTTP paths. */
export interface JsonAnswering {
  readonly engine: Pick<RateLimitEngine, 'shouldRateLimit'>;
  readonly logger: Logger;
  readonly limits: RequestLimits;
  /** Server spans; undefined while tracing is off. */
  readonly tracer: RequestTracer | undefined;
}

/** Ends the call's span with the answer, and hands the answer on. */
function ended(span: CallSpan | undefined, answer: JsonAnswer, extra: SpanExtra): JsonAnswer {
  span?.end({ httpStatus: answer.status, ...extra });
  return answer;
}

interface SpanExtra {
  readonly grpcStatus: string;
  readonly domain?: string;
  readonly overallCode?: string;
  readonly error?: unknown;
}

function errorAnswer(err: unknown): { answer: JsonAnswer; grpcStatus: string } {
  const edge = toEdgeError(err);
  return {
    answer: { status: edge.httpStatus, payload: { error: edge.code, message: edge.message } },
    grpcStatus: GrpcStatus[edge.grpcCode],
  };
}

/**
 * 200 when every limit holds, 429 when one is exceeded, 4xx/5xx with `{error, message}`.
 * `headers` carry the caller's trace context when tracing is on.
 */
export function answerJson(
  text: string,
  headers: IncomingHttpHeaders,
  answering: JsonAnswering,
): Promise<JsonAnswer> {
  const { engine, logger, limits, tracer } = answering;
  const span = tracer?.startCall('http', headers);
  let request;
  try {
    request = requestFromJson(text, limits);
  } catch (err: unknown) {
    const { answer, grpcStatus } = errorAnswer(err);
    return Promise.resolve(ended(span, answer, { grpcStatus, error: err }));
  }
  const domain = request.domain;
  const answerOf = (response: RateLimitResponse): JsonAnswer =>
    ended(
      span,
      {
        status: response.overallCode === 'OVER_LIMIT' ? 429 : 200,
        payload: responseToJson(response),
      },
      { grpcStatus: 'OK', domain, overallCode: response.overallCode },
    );
  const failureOf = (err: unknown): JsonAnswer => {
    const { answer, grpcStatus } = errorAnswer(err);
    const kind = toEdgeError(err).kind;
    if (kind === 'internal') {
      // Neither the request's fault nor the backend's: a bug, for the caller's last resort.
      span?.end({ httpStatus: 500, grpcStatus, domain, error: err });
      throw err;
    }
    // The store logs its outages a few lines each; one line per failed call would flood.
    if (kind !== 'request')
      logger.debug('rate limit request failed', { error: describeError(err) });
    return ended(span, answer, { grpcStatus, domain, error: err });
  };
  const settle = (response: RateLimitResponse): JsonAnswer => {
    try {
      return answerOf(response);
    } catch (err: unknown) {
      return failureOf(err);
    }
  };
  // Rejects only with an error nothing expected (a bug), which the caller's last resort takes.
  let decided: Pending<RateLimitResponse>;
  try {
    decided =
      span === undefined
        ? engine.shouldRateLimit(request)
        : span.within(() => engine.shouldRateLimit(request));
  } catch (err: unknown) {
    return settledNow(() => failureOf(err));
  }
  if (isPromise(decided)) return decided.then(settle, failureOf);
  const response = decided;
  return settledNow(() => settle(response));
}

/** `answer()` as a promise: resolved with what it returns, rejected with what it throws. */
function settledNow(answer: () => JsonAnswer): Promise<JsonAnswer> {
  try {
    return Promise.resolve(answer());
  } catch (err: unknown) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}
