// Tracing section: the OTLP exporter, the service's resource attributes, sampling, conventions.
import { deepFreeze } from '../lib/freeze';
import { bool, float, list, oneOf, str } from './fields';
import { group, type Values } from './section';
import type { TracingSettings } from './types';

export const TRACING = group('', {
  TRACING_ENABLED: bool(false),
  TRACING_EXPORTER_PROTOCOL: oneOf('http', ['http', 'grpc']),
  TRACING_SERVICE_NAME: str('RateLimit'),
  TRACING_SERVICE_NAMESPACE: str(),
  TRACING_SERVICE_INSTANCE_ID: str(),
  TRACING_SAMPLING_RATE: float(1, 0, 1),
  // OpenTelemetry's comma list, often set for a whole pod: tokens for other conventions
  // (http, http/dup, ...) are someone else's and pass through.
  OTEL_SEMCONV_STABILITY_OPT_IN: list(),
});

export function tracingSettings(t: Values<typeof TRACING>): TracingSettings {
  return deepFreeze({
    enabled: t.TRACING_ENABLED,
    exporterProtocol: t.TRACING_EXPORTER_PROTOCOL,
    serviceName: t.TRACING_SERVICE_NAME,
    serviceNamespace: t.TRACING_SERVICE_NAMESPACE,
    serviceInstanceId: t.TRACING_SERVICE_INSTANCE_ID,
    samplingRate: t.TRACING_SAMPLING_RATE,
    semconvStabilityOptIn: t.OTEL_SEMCONV_STABILITY_OPT_IN,
  });
}
