// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit: decode, decide, answer.
import type http2 from 'node:http2';
import type { RateLimitEngine, RateLimitRequest, RateLimitResponse } from '../../engine';
import type { Logger } from '../../lib/logger';
import { STAT, type StatsStore } from '../../stats';
import type { RequestTracer } from '../../tracing';
import { decodeRateLimitRequest, encodeRateLimitResponse } from '../wire/rls-codec';
import { GrpcStatus, parseTimeout } from './protocol';
import { failCall, sendMessage, sendStatus } from './replies';
import type { MethodHandler } from './router';
import { startTracedCall, type TracedCall } from './traced-call';
import { readUnary } from './unary';

export const SHOULD_RATE_LIMIT = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

export interface RlsMethodOptions {
  readonly engine: RateLimitEngine;
  readonly stats: StatsStore;
  readonly logger: Logger;
  /** Server spans; undefined while tracing is off, and then nothing is done for it per call. */
  readonly tracer: RequestTracer | undefined;
}

const elapsedMs = (started: bigint): number => Number(process.hrtime.bigint() - started) / 1e6;

/**
 * The ShouldRateLimit handler: counts every call under the method's name and times it from
 * its headers to the decision, as the reference does.
 */
export function shouldRateLimitMethod(options: RlsMethodOptions): MethodHandler {
  const { engine, logger, tracer } = options;
  const totalRequests = options.stats.counter(STAT.totalRequests('ShouldRateLimit'));
  const responseTime = options.stats.timer(STAT.responseTime('ShouldRateLimit'));

  const answer = (
    stream: http2.ServerHttp2Stream,
    request: RateLimitRequest,
    started: bigint,
    timeoutMs: number | undefined,
    call: TracedCall | undefined,
  ): void => {
    let decision: Promise<RateLimitResponse>;
    if (call === undefined) decision = engine.shouldRateLimit(request);
    else {
      call.domain = request.domain;
      decision = call.span.within(() => engine.shouldRateLimit(request));
    }
    decision.then(
      (response) => {
        if (call !== undefined) call.overallCode = response.overallCode;
        const elapsed = elapsedMs(started);
        responseTime.record(elapsed);
        // Past its deadline the caller has stopped waiting: say so instead of a stale answer.
        if (timeoutMs !== undefined && elapsed > timeoutMs) {
          sendStatus(stream, GrpcStatus.DEADLINE_EXCEEDED, 'the deadline passed');
          return;
        }
        sendMessage(stream, encodeRateLimitResponse(response, true));
      },
      (err: unknown) => {
        if (call !== undefined) call.error = err;
        responseTime.record(elapsedMs(started));
        failCall(stream, err, logger);
      },
    );
  };

  return (stream, headers, encoding) => {
    const started = process.hrtime.bigint();
    const timeoutMs = parseTimeout(headers['grpc-timeout']);
    totalRequests.inc();
    const call = tracer === undefined ? undefined : startTracedCall(tracer, stream, headers);
    readUnary(stream, encoding, logger, (message) => {
      let request;
      try {
        request = decodeRateLimitRequest(message.buf, message.start, message.end);
      } catch (err: unknown) {
        if (call !== undefined) call.error = err;
        responseTime.record(elapsedMs(started));
        failCall(stream, err, logger);
        return;
      }
      answer(stream, request, started, timeoutMs, call);
    });
  };
}
