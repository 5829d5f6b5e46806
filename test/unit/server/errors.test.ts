// The edge error table: one test per row, checking the gRPC status, the HTTP code and the text.
import { status } from '@grpc/grpc-js';
import { RequestError } from '../../../src/engine';
import { ERROR_TABLE, toEdgeError } from '../../../src/server';
import { StoreError } from '../../../src/store';

describe('the error table', () => {
  it('has exactly the request, backend and internal rows, in that order', () => {
    expect(ERROR_TABLE.map((r) => [r.kind, r.grpcCode, r.httpStatus])).toEqual([
      ['request', status.INVALID_ARGUMENT, 400],
      ['backend', status.UNAVAILABLE, 500],
      ['internal', status.INTERNAL, 500],
    ]);
  });

  it.each([
    ['EMPTY_DOMAIN', 'rate limit domain must not be empty'],
    ['NO_DESCRIPTORS', 'rate limit descriptor list must not be empty'],
    ['NO_CONFIG', 'no rate limit configuration loaded'],
  ] as const)('maps the request error %s to INVALID_ARGUMENT and 400', (code, message) => {
    expect(toEdgeError(new RequestError(code))).toEqual({
      kind: 'request',
      grpcCode: status.INVALID_ARGUMENT,
      httpStatus: 400,
      code,
      message,
    });
  });

  it('maps a malformed request to INVALID_ARGUMENT and 400 with what was wrong', () => {
    expect(toEdgeError(new RequestError('BAD_REQUEST', 'domain must be a string'))).toMatchObject({
      grpcCode: status.INVALID_ARGUMENT,
      httpStatus: 400,
      message: 'domain must be a string',
    });
  });

  it('maps a backend failure to UNAVAILABLE and 500, so the proxy failure mode decides', () => {
    expect(
      toEdgeError(new StoreError('redis', 'connect ECONNREFUSED 127.0.0.1:6379', true)),
    ).toEqual({
      kind: 'backend',
      grpcCode: status.UNAVAILABLE,
      httpStatus: 500,
      code: 'STORE_UNAVAILABLE',
      message: 'redis backend: connect ECONNREFUSED 127.0.0.1:6379',
    });
  });

  it('maps anything else to INTERNAL and 500 without detail or stack', () => {
    const edge = toEdgeError(new TypeError("Cannot read properties of undefined (reading 'x')"));
    expect(edge).toEqual({
      kind: 'internal',
      grpcCode: status.INTERNAL,
      httpStatus: 500,
      code: 'INTERNAL',
      message: 'internal error',
    });
    expect(toEdgeError('a thrown string').message).toBe('internal error');
  });
});
