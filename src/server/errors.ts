// The one mapping from errors to gRPC statuses and HTTP codes, used by every front end.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { RequestError } from '../engine';
import { BackendError } from '../lib/backend-error';

/** How one kind of error is answered at the edge. */
export interface EdgeError {
  readonly kind: 'request' | 'backend' | 'internal';
  readonly grpcCode: GrpcStatus;
  readonly httpStatus: number;
  /** A short stable code for HTTP bodies and logs. */
  readonly code: string;
  /** What was wrong, without a stack trace. */
  readonly message: string;
}

interface Row {
  readonly kind: EdgeError['kind'];
  readonly matches: (err: unknown) => boolean;
  readonly grpcCode: GrpcStatus;
  readonly httpStatus: number;
}

/**
 * Request errors are INVALID_ARGUMENT / 400. Backend errors are UNAVAILABLE / 500, so the
 * proxy's failure_mode_deny decides (the reference answers UNKNOWN for both). Anything else is
 * a bug: INTERNAL / 500 with no detail.
 */
export const ERROR_TABLE: readonly Row[] = Object.freeze([
  {
    kind: 'request',
    matches: (err: unknown) => err instanceof RequestError,
    grpcCode: GrpcStatus.INVALID_ARGUMENT,
    httpStatus: 400,
  },
  {
    kind: 'backend',
    matches: (err: unknown) => err instanceof BackendError,
    grpcCode: GrpcStatus.UNAVAILABLE,
    httpStatus: 500,
  },
  {
    kind: 'internal',
    matches: () => true,
    grpcCode: GrpcStatus.INTERNAL,
    httpStatus: 500,
  },
]);

/** Maps any thrown value to its answer. */
export function toEdgeError(err: unknown): EdgeError {
  const row = ERROR_TABLE.find((r) => r.matches(err)) ?? ERROR_TABLE[ERROR_TABLE.length - 1];
  if (row === undefined) throw new Error('the error table is empty');
  if (row.kind === 'internal') {
    return {
      kind: row.kind,
      grpcCode: row.grpcCode,
      httpStatus: row.httpStatus,
      code: 'INTERNAL',
      message: 'internal error',
    };
  }
  const e = err as Error & { code: string };
  return {
    kind: row.kind,
    grpcCode: row.grpcCode,
    httpStatus: row.httpStatus,
    code: e.code,
    message: e.message,
  };
}
