// Tracing: OpenTelemetry server spans per call and client spans per backend round trip.
export type { CallOutcome, CallSpan, CallTransport, RequestTracer } from './types';
export { startTracing, type Tracing } from './start-tracing';
export { tracedStore } from './traced-store';
export { semconvMode, type SemconvMode } from './semconv';
