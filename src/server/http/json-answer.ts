// One /json call from body text to HTTP status and JSON payload, for both HTTP paths.
import type { RateLimitEngine } from '../../engine';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import type { RequestLimits } from '../../settings';
import { toEdgeError } from '../errors';
import { requestFromJson, responseToJson } from '../wire/json';

export interface JsonAnswer {
  readonly status: number;
  readonly payload: unknown;
}

/** What answering /json needs besides the body. */
export interface JsonAnswering {
  readonly engine: Pick<RateLimitEngine, 'shouldRateLimit'>;
  readonly logger: Logger;
  readonly limits: RequestLimits;
}

/** 200 when every limit holds, 429 when one is exceeded, 4xx/5xx with `{error, message}`. */
export function answerJson(text: string, answering: JsonAnswering): Promise<JsonAnswer> {
  const { engine, logger, limits } = answering;
  let request;
  try {
    request = requestFromJson(text, limits);
  } catch (err: unknown) {
    const edge = toEdgeError(err);
    return Promise.resolve({
      status: edge.httpStatus,
      payload: { error: edge.code, message: edge.message },
    });
  }
  // Rejects only with an error nothing expected (a bug), which the caller's last resort takes.
  return engine
    .shouldRateLimit(request)
    .then((response) => ({
      status: response.overallCode === 'OVER_LIMIT' ? 429 : 200,
      payload: responseToJson(response),
    }))
    .catch((err: unknown) => {
      const edge = toEdgeError(err);
      // Neither the request's fault nor the backend's: a bug, for the caller's last resort.
      if (edge.kind === 'internal') throw err;
      if (edge.kind !== 'request')
        logger.warn('rate limit request failed', { error: describeError(err) });
      return { status: edge.httpStatus, payload: { error: edge.code, message: edge.message } };
    });
}
