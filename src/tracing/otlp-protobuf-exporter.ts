// OTLP/HTTP with protobuf bodies, what the reference's Go exporter (otlptracehttp) sends: the
// OpenTelemetry HTTP exporter's transport with the protobuf serializer instead of the JSON one.
import type { MeterProvider } from '@opentelemetry/api';
import {
  OTLPExporterBase,
  type IOtlpExportDelegate,
  type OTLPExporterNodeConfigBase,
} from '@opentelemetry/otlp-exporter-base';
import {
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
  type IExporterMetricsHelper,
  type IExportTraceServiceResponse,
  type ISerializer,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';

/** The two functions of the package's `node-http` entry point used here. */
interface NodeHttpEntry {
  convertLegacyHttpOptions(
    config: OTLPExporterNodeConfigBase,
    signal: string,
    resourcePath: string,
    requiredHeaders: Record<string, string>,
  ): unknown;
  createOtlpHttpExportDelegate(
    options: unknown,
    serializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse>,
    metricsComponentType: string,
    metricsHelper: IExporterMetricsHelper<ReadableSpan[]>,
    meterProvider: MeterProvider | undefined,
  ): IOtlpExportDelegate<ReadableSpan[]>;
}

// The entry point is named only in the package's exports map, which the compiler's node10
// resolution does not read; Node resolves it at run time.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeHttp = require('@opentelemetry/otlp-exporter-base/node-http') as NodeHttpEntry;

/** The component type the OpenTelemetry HTTP span exporters report themselves as. */
const COMPONENT_TYPE = 'otlp_http_span_exporter';

/**
 * Exports spans as OTLP/HTTP protobuf (`application/x-protobuf`) to the endpoint of the
 * OTEL_EXPORTER_OTLP_* variables, `/v1/traces` by default; failures are the exporter's results.
 */
export class OtlpProtobufTraceExporter
  extends OTLPExporterBase<ReadableSpan[]>
  implements SpanExporter
{
  constructor() {
    super(
      nodeHttp.createOtlpHttpExportDelegate(
        nodeHttp.convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', {
          'Content-Type': 'application/x-protobuf',
        }),
        ProtobufTraceSerializer,
        COMPONENT_TYPE,
        TraceExporterMetricsHelper,
        undefined,
      ),
    );
  }
}
