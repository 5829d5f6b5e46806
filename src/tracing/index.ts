// Tracing: OpenTelemetry server spans per call and client spans per backend round trip.
export type { CallOutcome, CallSpan, CallTransport, RequestTracer } from './types';
export { startTracing, type Tracing } from './start-tracing';
export { semconvMode, type SemconvMode } from './semconv';
