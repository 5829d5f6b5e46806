// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit: decode, decide, answer, within
// the caller's deadline.
import type http2 from 'node:http2';
import type { RateLimitEngine, RateLimitRequest, RateLimitResponse } from '../../engine';
import type { RequestLimits } from '../../settings';
import { STAT, type StatsStore } from '../../stats';
import type { RequestTracer } from '../../tracing';
import { decodeRateLimitRequest, encodeRateLimitResponse } from '../wire/rls-codec';
import { GrpcStatus, parseTimeout } from './protocol';
import { answerInternal, failCall, sendMessage, sendStatus } from './replies';
import type { MethodHandler } from './router';
import { startTracedCall, type TracedCall } from './traced-call';
import { readUnary, type UnaryReading } from './unary';

export const SHOULD_RATE_LIMIT = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

/** The part of the engine this method calls. */
export type Decider = Pick<RateLimitEngine, 'shouldRateLimit'>;

export interface RlsMethodOptions {
  readonly engine: Decider;
  readonly stats: StatsStore;
  readonly reading: UnaryReading;
  readonly limits: RequestLimits;
  /** Server spans; undefined while tracing is off, and then nothing is done for it per call. */
  readonly tracer: RequestTracer | undefined;
}

const elapsedMs = (started: number): number => performance.now() - started;

/** setTimeout's ceiling; a longer deadline needs no timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Answers DEADLINE_EXCEEDED when the caller's grpc-timeout runs out, at that moment: whatever
 * the backend still does for the call is not waited for, and its late answer is dropped (a
 * closed stream takes no reply). Returns the function that stops the timer.
 */
function armDeadline(stream: http2.ServerHttp2Stream, timeoutMs: number | undefined): () => void {
  if (timeoutMs === undefined || timeoutMs >= MAX_TIMER_MS) return noDeadline;
  const timer = setTimeout(() => {
    sendStatus(stream, GrpcStatus.DEADLINE_EXCEEDED, 'the deadline passed');
  }, timeoutMs);
  const disarm = (): void => {
    clearTimeout(timer);
  };
  stream.once('close', disarm);
  return disarm;
}

function noDeadline(): void {
  // No grpc-timeout: nothing to stop.
}

/** The engine's decision, inside the call's span when the call is traced. */
function decide(
  engine: Decider,
  request: RateLimitRequest,
  call: TracedCall | undefined,
): Promise<RateLimitResponse> {
  if (call === undefined) return engine.shouldRateLimit(request);
  call.domain = request.domain;
  return call.span.within(() => engine.shouldRateLimit(request));
}

/**
 * The ShouldRateLimit handler: counts every call under the method's name and times it from
 * its headers to the decision, as the reference does.
 */
export function shouldRateLimitMethod(options: RlsMethodOptions): MethodHandler {
  const { engine, reading, limits, tracer } = options;
  const { lastResort } = reading;
  const totalRequests = options.stats.counter(STAT.totalRequests('ShouldRateLimit'));
  const responseTime = options.stats.timer(STAT.responseTime('ShouldRateLimit'));

  // One then() with both handlers guarding themselves: a .catch() after it cost one more
  // promise and microtask per call.
  const answer = (
    stream: http2.ServerHttp2Stream,
    request: RateLimitRequest,
    started: number,
    disarm: () => void,
    call: TracedCall | undefined,
  ): void => {
    decide(engine, request, call).then(
      (response) => {
        try {
          disarm();
          if (call !== undefined) call.overallCode = response.overallCode;
          responseTime.record(elapsedMs(started));
          sendMessage(stream, encodeRateLimitResponse(response, true));
        } catch (err: unknown) {
          answerInternal(stream, err, lastResort, 'ShouldRateLimit');
        }
      },
      (err: unknown) => {
        try {
          disarm();
          if (call !== undefined) call.error = err;
          responseTime.record(elapsedMs(started));
          failCall(stream, err, reading);
        } catch (answerErr: unknown) {
          answerInternal(stream, answerErr, lastResort, 'ShouldRateLimit');
        }
      },
    );
  };

  return (stream, headers, encoding) => {
    const started = performance.now();
    const disarm = armDeadline(stream, parseTimeout(headers['grpc-timeout']));
    totalRequests.inc();
    const call = tracer === undefined ? undefined : startTracedCall(tracer, stream, headers);
    readUnary(stream, encoding, reading, (message) => {
      let request;
      try {
        request = decodeRateLimitRequest(message.buf, message.start, message.end, limits);
      } catch (err: unknown) {
        disarm();
        if (call !== undefined) call.error = err;
        responseTime.record(elapsedMs(started));
        failCall(stream, err, reading);
        return;
      }
      answer(stream, request, started, disarm, call);
    });
  };
}
