// Starts OpenTelemetry tracing when TRACING_ENABLED: provider, sampler, resource, OTLP exporter.
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_NAMESPACE,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../lib/logger';
import { SERVICE_VERSION } from '../lib/version';
import type { TracingSettings } from '../settings';
import { OtelRequestTracer } from './otel-tracer';
import { semconvMode } from './semconv';
import type { RequestTracer } from './types';

/** Tracing while it runs: the front ends' tracer, the store's, and the final flush. */
export interface Tracing {
  readonly requests: RequestTracer;
  /** For the spans around backend round trips (handed to createStore). */
  readonly tracer: Tracer;
  /** Exports the spans still buffered and stops; called once at shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The OTLP exporters, one per TRACING_EXPORTER_PROTOCOL; each reads OTEL_EXPORTER_OTLP_*.
 * `http` is protobuf, as the reference's otlptracehttp client sends; JSON is asked by name.
 */
const EXPORTERS: Readonly<Record<TracingSettings['exporterProtocol'], () => SpanExporter>> = {
  http: () => new OtlpProtobufExporter(),
  'http/protobuf': () => new OtlpProtobufExporter(),
  'http/json': () => new OtlpJsonExporter(),
  grpc: () => new OtlpGrpcExporter(),
};

/**
 * Starts tracing, or returns undefined when TRACING_ENABLED is false (nothing is loaded into
 * the request path then). A call whose caller sampled its trace is traced whatever the rate;
 * others with probability TRACING_SAMPLING_RATE, as the reference's parent-based sampler does.
 */
export function startTracing(settings: TracingSettings, logger: Logger): Tracing | undefined {
  if (!settings.enabled) return undefined;
  const instanceId = settings.serviceInstanceId === '' ? randomUUID() : settings.serviceInstanceId;
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: settings.serviceName,
    [ATTR_SERVICE_INSTANCE_ID]: instanceId,
    [ATTR_SERVICE_VERSION]: SERVICE_VERSION,
    ...(settings.serviceNamespace === ''
      ? {}
      : { [ATTR_SERVICE_NAMESPACE]: settings.serviceNamespace }),
  });
  const provider = new NodeTracerProvider({
    resource,
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(settings.samplingRate),
    }),
    spanProcessors: [new BatchSpanProcessor(EXPORTERS[settings.exporterProtocol]())],
  });
  // Sets the AsyncLocalStorage context manager, which carries a call's span to its store spans.
  provider.register();
  const tracer = provider.getTracer('ratelimit', SERVICE_VERSION);
  const mode = semconvMode(settings.semconvStabilityOptIn);
  logger.info('tracing started', {
    protocol: settings.exporterProtocol,
    serviceName: settings.serviceName,
    serviceNamespace: settings.serviceNamespace,
    serviceInstanceId: instanceId,
    samplingRate: settings.samplingRate,
    semconv: mode,
  });
  return {
    requests: new OtelRequestTracer(tracer, mode),
    tracer,
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
