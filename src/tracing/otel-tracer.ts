// RequestTracer on the OpenTelemetry API: server spans that join the caller's W3C trace.
import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';
import { describeError } from '../lib/errors';
import {
  fullMethod,
  isServerFault,
  RLQS,
  RLS_FULL_METHOD,
  rpcEndAttributes,
  rpcStartAttributes,
  type SemconvMode,
} from './semconv';
import type { CallOutcome, CallSpan, CallTransport, RequestTracer, StreamSpan } from './types';

/** The /json route, as the HTTP conventions name its span: `<method> <route>`. */
const JSON_ROUTE = '/json';
const JSON_SPAN_NAME = `POST ${JSON_ROUTE}`;

const HTTP_START: Attributes = {
  [ATTR_HTTP_REQUEST_METHOD]: 'POST',
  [ATTR_HTTP_ROUTE]: JSON_ROUTE,
  [ATTR_URL_PATH]: JSON_ROUTE,
};

/** Domain and decision, named as this service's own attributes. */
export const ATTR_RATELIMIT_DOMAIN = 'ratelimit.domain';
export const ATTR_RATELIMIT_OVERALL_CODE = 'ratelimit.overall_code';
/** The buckets of one RLQS usage report, on its `report` event. */
export const ATTR_RLQS_BUCKETS = 'rlqs.buckets';
const RLQS_FULL_METHOD = fullMethod(RLQS);

/** Sets the outcome's attributes and status on `span` and ends it. */
function endSpan(span: Span, mode: SemconvMode, outcome: CallOutcome): void {
  span.setAttributes(rpcEndAttributes(mode, outcome.grpcStatus));
  if (outcome.httpStatus !== undefined)
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.httpStatus);
  if (outcome.domain !== undefined) span.setAttribute(ATTR_RATELIMIT_DOMAIN, outcome.domain);
  if (outcome.overallCode !== undefined)
    span.setAttribute(ATTR_RATELIMIT_OVERALL_CODE, outcome.overallCode);
  if (isServerFault(outcome.grpcStatus, outcome.httpStatus)) {
    const message = outcome.error === undefined ? outcome.grpcStatus : describeError(outcome.error);
    if (outcome.error instanceof Error) span.recordException(outcome.error);
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  span.end();
}

class OtelCallSpan implements CallSpan {
  constructor(
    private readonly span: Span,
    private readonly active: Context,
    private readonly mode: SemconvMode,
  ) {}

  within<T>(work: () => T): T {
    // An unsampled call's children would be unsampled too (parent-based sampling): skip the
    // context switch, whose AsyncLocalStorage is what costs, not the span.
    return this.span.isRecording() ? context.with(this.active, work) : work();
  }

  end(outcome: CallOutcome): void {
    endSpan(this.span, this.mode, outcome);
  }
}

/**
 * An RLQS stream's span. Its reports are events, which the SDK bounds per span (its event
 * count limit), so a stream open for days holds no more than that.
 */
class OtelStreamSpan implements StreamSpan {
  constructor(
    private readonly span: Span,
    private readonly mode: SemconvMode,
  ) {}

  report(domain: string, buckets: number): void {
    if (!this.span.isRecording()) return;
    this.span.addEvent('report', { [ATTR_RATELIMIT_DOMAIN]: domain, [ATTR_RLQS_BUCKETS]: buckets });
  }

  end(outcome: CallOutcome): void {
    endSpan(this.span, this.mode, outcome);
  }
}

/** Starts one SERVER span per call with the attributes of the chosen conventions. */
export class OtelRequestTracer implements RequestTracer {
  private readonly rpcAttributes: Attributes;
  private readonly rlqsAttributes: Attributes;
  private readonly propagator: TextMapPropagator = new W3CTraceContextPropagator();

  constructor(
    private readonly tracer: Tracer,
    private readonly mode: SemconvMode,
  ) {
    this.rpcAttributes = rpcStartAttributes(mode);
    this.rlqsAttributes = rpcStartAttributes(mode, RLQS);
  }

  startCall(transport: CallTransport, headers: IncomingHttpHeaders): CallSpan {
    const parent = this.callerContext(headers);
    const isGrpc = transport === 'grpc';
    const span = this.tracer.startSpan(
      isGrpc ? RLS_FULL_METHOD : JSON_SPAN_NAME,
      {
        kind: SpanKind.SERVER,
        attributes: isGrpc ? this.rpcAttributes : { ...this.rpcAttributes, ...HTTP_START },
      },
      parent,
    );
    return new OtelCallSpan(span, trace.setSpan(parent, span), this.mode);
  }

  startStream(headers: IncomingHttpHeaders): StreamSpan {
    const span = this.tracer.startSpan(
      RLQS_FULL_METHOD,
      { kind: SpanKind.SERVER, attributes: this.rlqsAttributes },
      this.callerContext(headers),
    );
    return new OtelStreamSpan(span, this.mode);
  }

  /** The caller's trace, from a W3C traceparent in the headers (the root context without). */
  private callerContext(headers: IncomingHttpHeaders): Context {
    return this.propagator.extract(ROOT_CONTEXT, headers, {
      get: (carrier: IncomingHttpHeaders, key) => carrier[key],
      keys: (carrier: IncomingHttpHeaders) => Object.keys(carrier),
    });
  }
}
