// RequestError: a request the service cannot answer because of the request or the service state.

export const REQUEST_ERROR_CODES = Object.freeze({
  EMPTY_DOMAIN: 'rate limit domain must not be empty',
  NO_DESCRIPTORS: 'rate limit descriptor list must not be empty',
  NO_CONFIG: 'no rate limit configuration loaded',
  BAD_REQUEST: 'the request is malformed',
} as const);

export type RequestErrorCode = keyof typeof REQUEST_ERROR_CODES;

/** A request error; the edge answers gRPC INVALID_ARGUMENT or HTTP 400. */
export class RequestError extends Error {
  constructor(
    readonly code: RequestErrorCode,
    message: string = REQUEST_ERROR_CODES[code],
  ) {
    super(message);
    this.name = 'RequestError';
  }
}
