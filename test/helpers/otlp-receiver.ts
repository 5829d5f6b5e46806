// A small OTLP trace receiver on loopback, over HTTP (JSON or protobuf) and gRPC, that keeps
// every span it is sent, for tests of the service's tracing.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import protobuf from 'protobufjs';

const PROTO = path.resolve(__dirname, '..', 'fixtures', 'otlp', 'trace-service.proto');
const PACKAGE = 'opentelemetry.proto.collector.trace.v1';

export type AttributeValue = string | number | boolean;

/** One received span, ids in hex as in a traceparent header. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP SpanKind: 2 SERVER, 3 CLIENT. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** The span's events in order (an RLQS stream's reports). */
  readonly events: readonly {
    readonly name: string;
    readonly attributes: Readonly<Record<string, AttributeValue>>;
  }[];
  /** OTLP StatusCode: 0 UNSET, 1 OK, 2 ERROR. */
  readonly status: { readonly code: number; readonly message: string };
  /** The attributes of the resource the span came with (service.name ...). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
  /** How it arrived: OTLP/HTTP with a protobuf or a JSON body, or gRPC. */
  readonly via: 'http/protobuf' | 'http/json' | 'grpc';
}

/** OTLP/JSON and the proto-loader objects share this shape, ids aside. */
interface WireKeyValue {
  key: string;
  value?: {
    stringValue?: string;
    boolValue?: boolean;
    intValue?: string | number;
    doubleValue?: number;
  };
}
interface WireSpan {
  traceId: string | Uint8Array;
  spanId: string | Uint8Array;
  parentSpanId?: string | Uint8Array;
  name: string;
  kind?: number;
  attributes?: WireKeyValue[];
  events?: { name?: string; attributes?: WireKeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface WireRequest {
  resourceSpans?: {
    resource?: { attributes?: WireKeyValue[] };
    scopeSpans?: { spans?: WireSpan[] }[];
  }[];
}

function attributes(list: WireKeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value === undefined) continue;
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

const hex = (id: string | Uint8Array | undefined): string =>
  id === undefined ? '' : typeof id === 'string' ? id : Buffer.from(id).toString('hex');

function flatten(request: WireRequest, via: ReceivedSpan['via']): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        out.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((e) => ({
            name: e.name ?? '',
            attributes: attributes(e.attributes),
          })),
          status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
          resource,
          via,
        });
      }
    }
  }
  return out;
}

export class OtlpReceiver {
  private constructor(
    /** Every span received so far, in arrival order. */
    readonly spans: ReceivedSpan[],
    private readonly httpServer: http.Server,
    private readonly grpcServer: grpc.Server,
    /** Where the HTTP receiver listens: OTEL_EXPORTER_OTLP_ENDPOINT for the http protocol. */
    readonly httpEndpoint: string,
    /** Where the gRPC receiver listens: OTEL_EXPORTER_OTLP_ENDPOINT for the grpc protocol. */
    readonly grpcEndpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const spans: ReceivedSpan[] = [];
    const requestType = (await protobuf.load(PROTO)).lookupType(
      `${PACKAGE}.ExportTraceServiceRequest`,
    );
    const httpServer = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const isJson = (req.headers['content-type'] ?? '').includes('json');
        const decoded = isJson
          ? (JSON.parse(body.toString('utf8')) as WireRequest)
          : (requestType.toObject(requestType.decode(body), { longs: String }) as WireRequest);
        spans.push(...flatten(decoded, isJson ? 'http/json' : 'http/protobuf'));
        res.writeHead(200, {
          'content-type': isJson ? 'application/json' : 'application/x-protobuf',
        });
        res.end(isJson ? '{}' : undefined);
      });
    });
    await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    const definition = protoLoader.loadSync(PROTO, { longs: String, enums: Number });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      opentelemetry: {
        proto: { collector: { trace: { v1: { TraceService: grpc.ServiceClientConstructor } } } };
      };
    };
    const grpcServer = new grpc.Server();
    grpcServer.addService(loaded.opentelemetry.proto.collector.trace.v1.TraceService.service, {
      Export: (
        call: grpc.ServerUnaryCall<WireRequest, object>,
        callback: grpc.sendUnaryData<object>,
      ) => {
        spans.push(...flatten(call.request, 'grpc'));
        callback(null, {});
      },
    });
    const grpcPort = await new Promise<number>((resolve, reject) => {
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err !== null) reject(err);
        else resolve(port);
      });
    });
    const httpPort = (httpServer.address() as AddressInfo).port;
    return new OtlpReceiver(
      spans,
      httpServer,
      grpcServer,
      `http://127.0.0.1:${httpPort}`,
      `http://127.0.0.1:${grpcPort}`,
    );
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.grpcServer.forceShutdown();
    await new Promise<void>((resolve) => {
      this.httpServer.close(() => {
        resolve();
      });
      this.httpServer.closeAllConnections();
    });
  }
}
