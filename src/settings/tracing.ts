// Tracing section: the OTLP exporter, the service's resource attributes, sampling, conventions.
import { deepFreeze } from '../lib/freeze';
import { describeValue, type Environment } from './environment';
import type { SettingsProblem } from './errors';
import { bool, float, list, oneOf, str } from './fields';
import { group, type Values } from './section';
import type { TracingSettings } from './types';

export const TRACING = group('', {
  TRACING_ENABLED: bool(false),
  TRACING_EXPORTER_PROTOCOL: oneOf('http', ['http', 'http/protobuf', 'http/json', 'grpc']),
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

/** The OTLP exporter's destination settings, which the exporter reads from the environment. */
const OTLP_ENDPOINTS = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];

/**
 * The exporter takes a malformed endpoint without a word and every span is lost, so with
 * tracing on a destination that is not an http(s) URL stops start-up instead. With tracing off
 * the variables are someone else's (set for a whole pod) and not read.
 */
export function otlpEndpointProblems(env: Environment, isEnabled: boolean): SettingsProblem[] {
  if (!isEnabled) return [];
  const problems: SettingsProblem[] = [];
  for (const setting of OTLP_ENDPOINTS) {
    const value = env[setting];
    if (value === undefined || value === '') continue;
    let protocol: string | undefined;
    try {
      protocol = new URL(value).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol === 'http:' || protocol === 'https:') continue;
    problems.push({
      setting,
      message: `${describeValue(value)} is not valid; accepted: an http:// or https:// URL, such as http://otel-collector:4318 (OTLP/HTTP) or http://otel-collector:4317 (OTLP/gRPC)`,
    });
  }
  return problems;
}
