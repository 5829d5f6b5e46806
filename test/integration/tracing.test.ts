// OpenTelemetry tracing of the built service, its spans collected by a small OTLP receiver on
// loopback (HTTP and gRPC): names, attributes per convention mode, parent and child, the trace
// taken from traceparent, span status on errors, and sampling.
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { RedisServer } from '../helpers/redis-server';
import { QuotaStreamClient, usage } from '../helpers/rlqs-stream';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const FULL_METHOD = 'envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const SERVER = 2;
const CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;
const CONFIG = {
  'traced.yaml':
    'domain: traced\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1 }\n' +
    'quota_buckets:\n  - bucket: { name: api }\n    requests_per_unit: 100\n    unit: second\n',
};
const RLQS_METHOD = 'envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';
const REQUEST = rlsRequest('traced', [[['k', 'v']]]);

/** A caller's span: a traceparent header and the ids it carries. */
function callerSpan(isSampled = true): { traceparent: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceparent: `00-${traceId}-${spanId}-${isSampled ? '01' : '00'}`, traceId, spanId };
}

function metadataOf(traceparent: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('traceparent', traceparent);
  return metadata;
}

/** One ShouldRateLimit with a traceparent in its metadata; resolves with the status code. */
async function callWithTrace(
  client: RlsClient,
  traceparent: string,
  request = REQUEST,
): Promise<number> {
  try {
    await client.shouldRateLimit(request, metadataOf(traceparent));
    return grpc.status.OK;
  } catch (err: unknown) {
    return (err as grpc.ServiceError).code;
  }
}

/** Waits for the spans of a trace: its server span and `children` client spans. */
async function spansOf(
  receiver: OtlpReceiver,
  traceId: string,
  children = 1,
): Promise<{ server: ReceivedSpan; clients: ReceivedSpan[] }> {
  await eventually(
    () => {
      const spans = receiver.trace(traceId);
      return (
        spans.some((s) => s.kind === SERVER) &&
        spans.filter((s) => s.kind === CLIENT).length >= children
      );
    },
    { what: `the spans of trace ${traceId}` },
  );
  const spans = receiver.trace(traceId);
  const server = spans.find((s) => s.kind === SERVER);
  if (server === undefined) throw new Error('no server span');
  return { server, clients: spans.filter((s) => s.kind === CLIENT) };
}

/** An RLQS stream with a traceparent that reports twice, reads the first answer, and ends. */
async function quotaStreamWithTrace(port: number, traceparent: string): Promise<void> {
  const stream = QuotaStreamClient.open(port, metadataOf(traceparent));
  stream.report('traced', [usage({ name: 'api' })]);
  await stream.waitForAnswers(1);
  stream.report(undefined, [usage({ name: 'api' }), usage({ name: 'other' })]);
  await stream.end();
}

let receiver: OtlpReceiver;
let runtime: RuntimeDir;
const started: ServiceProcess[] = [];
const clients: RlsClient[] = [];

async function tracedService(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      TRACING_ENABLED: 'true',
      // Export every 50 ms instead of every 5 s, so the test waits little.
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.httpEndpoint,
      ...env,
    },
  });
  started.push(service);
  return service;
}

function client(service: ServiceProcess): RlsClient {
  const c = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  runtime = new RuntimeDir(CONFIG);
});

afterAll(async () => {
  for (const c of clients) c.close();
  for (const service of started) await service.stop();
  await receiver.stop();
  runtime.destroy();
});

describe('stable conventions (the default), OTLP over HTTP', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await tracedService({
      TRACING_SERVICE_NAME: 'edge-ratelimit',
      TRACING_SERVICE_NAMESPACE: 'mesh',
    });
  });

  it("makes a server span in the caller's trace, with a child per backend round trip", async () => {
    const caller = callerSpan();
    expect(await callWithTrace(client(service), caller.traceparent)).toBe(grpc.status.OK);
    const { server, clients: children } = await spansOf(receiver, caller.traceId);
    expect(server).toMatchObject({
      name: FULL_METHOD,
      parentSpanId: caller.spanId,
      // Protobuf, as the reference's otlptracehttp client sends (envoyproxy/ratelimit
      // src/trace/trace.go, createClient: `http` is otlptracehttp.NewClient()).
      via: 'http/protobuf',
      status: { code: STATUS_UNSET },
      attributes: {
        'rpc.system.name': 'grpc',
        'rpc.method': FULL_METHOD,
        'rpc.response.status_code': 'OK',
        'ratelimit.domain': 'traced',
        'ratelimit.overall_code': 'OK',
      },
    });
    expect(server.attributes).not.toHaveProperty('rpc.system');
    expect(server.attributes).not.toHaveProperty('rpc.service');
    expect(server.attributes).not.toHaveProperty('rpc.grpc.status_code');
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({
      name: 'memory increment',
      parentSpanId: server.spanId,
      attributes: { 'db.operation.name': 'increment', 'db.operation.batch.size': 1 },
    });
    expect(server.resource).toMatchObject({
      'service.name': 'edge-ratelimit',
      'service.namespace': 'mesh',
    });
    expect(server.resource['service.instance.id']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('traces POST /json too, joining the trace of its traceparent header', async () => {
    const caller = callerSpan();
    const res = await fetch(service.url('/json'), {
      method: 'POST',
      headers: { traceparent: caller.traceparent },
      body: JSON.stringify({
        domain: 'traced',
        descriptors: [{ entries: [{ key: 'k', value: 'json' }] }],
      }),
    });
    expect(res.status).toBe(200);
    const { server, clients: children } = await spansOf(receiver, caller.traceId);
    expect(server).toMatchObject({
      name: 'POST /json',
      parentSpanId: caller.spanId,
      attributes: {
        'rpc.method': FULL_METHOD,
        'rpc.response.status_code': 'OK',
        'http.request.method': 'POST',
        'http.route': '/json',
        'http.response.status_code': 200,
      },
    });
    expect(children.map((c) => c.parentSpanId)).toEqual([server.spanId]);
  });

  it("traces an RLQS stream: one span in the caller's trace, an event per report", async () => {
    const caller = callerSpan();
    await quotaStreamWithTrace(service.ports.grpc, caller.traceparent);
    const { server } = await spansOf(receiver, caller.traceId, 0);
    expect(server).toMatchObject({
      name: RLQS_METHOD,
      parentSpanId: caller.spanId,
      status: { code: STATUS_UNSET },
      attributes: {
        'rpc.system.name': 'grpc',
        'rpc.method': RLQS_METHOD,
        'rpc.response.status_code': 'OK',
        'ratelimit.domain': 'traced',
      },
    });
    // The second report leaves the domain out, as Envoy does after the first.
    expect(server.events).toEqual([
      { name: 'report', attributes: { 'ratelimit.domain': 'traced', 'rlqs.buckets': 1 } },
      { name: 'report', attributes: { 'ratelimit.domain': 'traced', 'rlqs.buckets': 2 } },
    ]);
  });

  it("leaves the status unset for a caller's mistake, as the gRPC server conventions say", async () => {
    const caller = callerSpan();
    const code = await callWithTrace(
      client(service),
      caller.traceparent,
      rlsRequest('', [[['k', 'v']]]),
    );
    expect(code).toBe(grpc.status.INVALID_ARGUMENT);
    const { server } = await spansOf(receiver, caller.traceId, 0);
    expect(server.status.code).toBe(STATUS_UNSET);
    expect(server.attributes['rpc.response.status_code']).toBe('INVALID_ARGUMENT');
  });
});

describe('span status on a backend failure', () => {
  it('marks the server span and its backend span ERROR while Redis is down', async () => {
    const redis = await RedisServer.start();
    try {
      const service = await tracedService({
        BACKEND_TYPE: 'redis',
        REDIS_SOCKET_TYPE: 'tcp',
        REDIS_URL: `127.0.0.1:${redis.port}`,
        REDIS_TIMEOUT: '500ms',
      });
      await redis.stop();
      const caller = callerSpan();
      expect(await callWithTrace(client(service), caller.traceparent)).toBe(
        grpc.status.UNAVAILABLE,
      );
      const { server, clients: children } = await spansOf(receiver, caller.traceId);
      expect(server.status.code).toBe(STATUS_ERROR);
      expect(server.attributes['rpc.response.status_code']).toBe('UNAVAILABLE');
      expect(children[0]).toMatchObject({
        name: 'redis increment',
        status: { code: STATUS_ERROR },
        attributes: { 'db.system.name': 'redis' },
      });
    } finally {
      await redis.stop();
    }
  });
});

describe.each([
  [
    'rpc/old',
    {
      'rpc.system': 'grpc',
      'rpc.service': 'envoy.service.ratelimit.v3.RateLimitService',
      'rpc.method': 'ShouldRateLimit',
    },
    ['rpc.system.name', 'rpc.response.status_code', 'rpc.grpc.status_code'],
  ],
  [
    'http,rpc/dup',
    {
      'rpc.system': 'grpc',
      'rpc.service': 'envoy.service.ratelimit.v3.RateLimitService',
      'rpc.system.name': 'grpc',
      'rpc.method': FULL_METHOD,
      'rpc.response.status_code': 'OK',
    },
    ['rpc.grpc.status_code'],
  ],
])('OTEL_SEMCONV_STABILITY_OPT_IN=%s, OTLP over gRPC', (optIn, present, absent) => {
  it('sets the attributes of that mode', async () => {
    const service = await tracedService({
      TRACING_EXPORTER_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.grpcEndpoint,
      OTEL_SEMCONV_STABILITY_OPT_IN: optIn,
    });
    const caller = callerSpan();
    expect(await callWithTrace(client(service), caller.traceparent)).toBe(grpc.status.OK);
    const { server } = await spansOf(receiver, caller.traceId);
    expect(server.via).toBe('grpc');
    expect(server.name).toBe(FULL_METHOD);
    expect(server.attributes).toMatchObject(present);
    for (const name of absent) expect(server.attributes).not.toHaveProperty(name);
  });
});

describe('TRACING_EXPORTER_PROTOCOL=http/json', () => {
  it('sends OTLP/HTTP JSON to the same endpoint', async () => {
    const service = await tracedService({ TRACING_EXPORTER_PROTOCOL: 'http/json' });
    const caller = callerSpan();
    expect(await callWithTrace(client(service), caller.traceparent)).toBe(grpc.status.OK);
    const { server } = await spansOf(receiver, caller.traceId);
    expect([server.via, server.name]).toEqual(['http/json', FULL_METHOD]);
  });
});

describe('TRACING_SAMPLING_RATE=0', () => {
  it('exports no span of its own, yet follows a caller that sampled its trace', async () => {
    const service = await tracedService({
      TRACING_SAMPLING_RATE: '0',
      TRACING_SERVICE_INSTANCE_ID: 'never-sampling',
    });
    const rls = client(service);
    const before = receiver.spans.length;
    for (let i = 0; i < 5; i++)
      expect((await rls.shouldRateLimit(REQUEST)).overallCode).toBeDefined();
    const unsampled = callerSpan(false);
    expect(await callWithTrace(rls, unsampled.traceparent)).toBe(grpc.status.OK);
    const sampled = callerSpan(true);
    expect(await callWithTrace(rls, sampled.traceparent)).toBe(grpc.status.OK);
    await spansOf(receiver, sampled.traceId);
    // Spans leave in the order they end: had any earlier call been sampled, it would be here.
    const since = receiver.spans
      .slice(before)
      .filter((s) => s.resource['service.instance.id'] === 'never-sampling');
    expect(new Set(since.map((s) => s.traceId))).toEqual(new Set([sampled.traceId]));
  });

  it('is refused outside 0..1, naming the setting', async () => {
    const service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        BACKEND_TYPE: 'memory',
        TRACING_ENABLED: 'true',
        TRACING_SAMPLING_RATE: '1.5',
      },
      waitFor: 'nothing',
    });
    expect(await service.waitForExit()).toBe(1);
    expect(service.logs).toContain(
      'TRACING_SAMPLING_RATE: "1.5" is not valid; accepted: a number from 0 to 1',
    );
  });
});
