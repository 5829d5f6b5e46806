// Tracing: OpenTelemetry server spans per call and per RLQS stream, client spans per backend
// round trip.
export type { CallOutcome, CallSpan, CallTransport, RequestTracer, StreamSpan } from './types';
export { startTracing, type Tracing } from './start-tracing';
export { semconvMode, type SemconvMode } from './semconv';
