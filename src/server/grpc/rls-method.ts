// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit: decode, decide, answer, within
// the caller's deadline.
import type { H2Stream } from '../h2';
import type { RateLimitEngine, RateLimitRequest, RateLimitResponse } from '../../engine';
import { isPromise, type Pending } from '../../lib/pending';
import type { RequestLimits } from '../../settings';
import { STAT, type StatsStore, type Timer } from '../../stats';
import type { RequestTracer } from '../../tracing';
import { decodeRateLimitRequest, encodeRateLimitResponse } from '../wire/rls-codec';
import type { Deadline, Deadlines } from './deadlines';
import { GrpcStatus, parseTimeout } from './protocol';
import { answerInternal, failCall, sendMessage, sendStatus } from './replies';
import type { MethodHandler } from './router';
import { startTracedCall, type TracedCall } from './traced-call';
import { readUnary, type UnaryReading, type UnaryReceiver } from './unary';

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
  /** The server's deadline queues (expiring with deadlinePassed), cleared when it closes. */
  readonly deadlines: Deadlines<H2Stream>;
}

const elapsedMs = (started: number): number => performance.now() - started;

/** Answers DEADLINE_EXCEEDED: the caller's grpc-timeout ran out (the server's Deadlines). */
export function deadlinePassed(stream: H2Stream): void {
  sendStatus(stream, GrpcStatus.DEADLINE_EXCEEDED, 'the deadline passed');
}

/**
 * Arms the caller's grpc-timeout: at that moment the call is answered DEADLINE_EXCEEDED, and
 * whatever the backend still does for it is not waited for (a closed stream takes no late
 * reply). Undefined: no grpc-timeout, or one too long to need a timer.
 */
function armDeadline(
  deadlines: Deadlines<H2Stream>,
  stream: H2Stream,
  timeoutMs: number | undefined,
): Deadline<H2Stream> | undefined {
  return timeoutMs === undefined ? undefined : deadlines.arm(timeoutMs, stream);
}

/** The engine's decision, inside the call's span when the call is traced. */
function decideInSpan(
  engine: Decider,
  request: RateLimitRequest,
  call: TracedCall | undefined,
): Pending<RateLimitResponse> {
  if (call === undefined) return engine.shouldRateLimit(request);
  call.domain = request.domain;
  return call.span.within(() => engine.shouldRateLimit(request));
}

/** What ending one call needs besides the call itself. */
interface Ending {
  readonly responseTime: Timer;
  readonly reading: UnaryReading;
  readonly deadlines: Deadlines<H2Stream>;
}

/** One call in flight: its stream, when it began, its deadline and its span. */
interface Call {
  readonly stream: H2Stream;
  readonly started: number;
  readonly deadline: Deadline<H2Stream> | undefined;
  readonly traced: TracedCall | undefined;
}

/** Stops the call's deadline: it was answered, or its client went away. */
function disarm(ending: Ending, call: Call): void {
  if (call.deadline !== undefined) ending.deadlines.disarm(call.deadline);
}

// Both guard themselves: the promise path's then() needs no .catch(), which cost one more
// promise and microtask per call.
function answered(ending: Ending, call: Call, response: RateLimitResponse): void {
  try {
    disarm(ending, call);
    if (call.traced !== undefined) call.traced.overallCode = response.overallCode;
    ending.responseTime.record(elapsedMs(call.started));
    sendMessage(call.stream, encodeRateLimitResponse(response, true));
  } catch (err: unknown) {
    answerInternal(call.stream, err, ending.reading.lastResort, 'ShouldRateLimit');
  }
}

function failed(ending: Ending, call: Call, err: unknown): void {
  try {
    disarm(ending, call);
    if (call.traced !== undefined) call.traced.error = err;
    ending.responseTime.record(elapsedMs(call.started));
    failCall(call.stream, err, ending.reading);
  } catch (answerErr: unknown) {
    answerInternal(call.stream, answerErr, ending.reading.lastResort, 'ShouldRateLimit');
  }
}

/** Decides and answers: in this turn when the engine answers so, else when its promise settles. */
function answer(engine: Decider, ending: Ending, call: Call, request: RateLimitRequest): void {
  let decided: Pending<RateLimitResponse>;
  try {
    decided = decideInSpan(engine, request, call.traced);
  } catch (err: unknown) {
    failed(ending, call, err);
    return;
  }
  if (!isPromise(decided)) {
    answered(ending, call, decided);
    return;
  }
  decided.then(
    (response) => {
      answered(ending, call, response);
    },
    (err: unknown) => {
      failed(ending, call, err);
    },
  );
}

/**
 * The ShouldRateLimit handler: counts every call under the method's name and times it from
 * its headers to the decision, as the reference does.
 */
export function shouldRateLimitMethod(options: RlsMethodOptions): MethodHandler {
  const { engine, reading, limits, tracer } = options;
  const totalRequests = options.stats.counter(STAT.totalRequests('ShouldRateLimit'));
  const ending: Ending = {
    responseTime: options.stats.timer(STAT.responseTime('ShouldRateLimit')),
    reading,
    deadlines: options.deadlines,
  };
  const receiver: UnaryReceiver<Call> = {
    message: (call, message) => {
      let request;
      try {
        request = decodeRateLimitRequest(message.buf, message.start, message.end, limits);
      } catch (err: unknown) {
        failed(ending, call, err);
        return;
      }
      answer(engine, ending, call, request);
    },
    unread: (call) => {
      disarm(ending, call);
    },
  };
  return (stream, headers, encoding) => {
    const call: Call = {
      stream,
      started: performance.now(),
      deadline: armDeadline(ending.deadlines, stream, parseTimeout(headers['grpc-timeout'])),
      traced: tracer === undefined ? undefined : startTracedCall(tracer, stream, headers),
    };
    totalRequests.inc();
    readUnary(stream, encoding, reading, receiver, call);
  };
}
