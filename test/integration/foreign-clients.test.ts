// The built service as users meet it: called by clients this project did not write. Debian's
// python3-grpcio (gRPC's C core) makes unary calls and reads statuses; h2load (nghttp2) sends a
// burst of gRPC requests over several HTTP/2 connections, each counted exactly once. On the
// service's own HTTP/2 and on node:http2 (GRPC_HTTP2=node) alike.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadPackageDefinition } from '../../src/lib/proto';
import { pythonCalls, type PythonAnswer } from '../helpers/python-grpc';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { runProgram } from '../helpers/programs';

const RLS_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

interface Codec {
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): {
    overallCode?: string;
    statuses?: { code?: string; limitRemaining?: number }[];
  };
}
const rls = (
  loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
    'envoy.service.ratelimit.v3.RateLimitService'
  ] as unknown as { ShouldRateLimit: Codec }
).ShouldRateLimit;

function request(domain: string, key: string, value: string, hits?: number): Buffer {
  return rls.requestSerialize({
    domain,
    descriptors: [{ entries: [{ key, value }] }],
    ...(hits === undefined ? {} : { hitsAddend: hits }),
  });
}

function decoded(answer: PythonAnswer | undefined): ReturnType<Codec['responseDeserialize']> {
  if (answer?.status !== 0) throw new Error(`not OK: ${JSON.stringify(answer)}`);
  return rls.responseDeserialize(Buffer.from(answer.detail, 'hex'));
}

const runtime = runtimeDirForFile({
  'f.yaml': [
    'domain: foreign',
    'descriptors:',
    '  - key: two',
    '    rate_limit: { unit: hour, requests_per_unit: 2 }',
    '  - key: burst',
    '    rate_limit: { unit: hour, requests_per_unit: 1000 }',
    '',
  ].join('\n'),
});
describe.each(['own', 'node'])('on GRPC_HTTP2=%s', (http2Impl) => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await ServiceProcess.start({
      env: { ...runtime.env(), BACKEND_TYPE: 'memory', GRPC_HTTP2: http2Impl },
    });
  });

  afterAll(async () => {
    await service.stop();
  });

  it('runs on the HTTP/2 GRPC_HTTP2 names', () => {
    expect(service.logs.includes('node:http2 (GRPC_HTTP2=node)')).toBe(http2Impl === 'node');
  });

  it("answers Debian's python3-grpcio (the C core): decisions, limits and statuses", () => {
    const answers = pythonCalls(service.ports.grpc, RLS_PATH, [
      request('foreign', 'two', 'a'),
      request('foreign', 'two', 'a'),
      request('foreign', 'two', 'a'),
      request('foreign', 'unknown', 'x'),
      request('', 'two', 'a'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([0, 0, 0, 0, 3]);
    expect(decoded(answers[0]).statuses?.[0]).toMatchObject({ code: 'OK', limitRemaining: 1 });
    // proto3 leaves a zero out of the wire.
    expect(decoded(answers[1]).statuses?.[0]?.limitRemaining).toBeUndefined();
    expect(decoded(answers[1]).overallCode).toBe('OK');
    expect(decoded(answers[2]).overallCode).toBe('OVER_LIMIT');
    // No rule for the key: allowed, with no limit attached.
    expect(decoded(answers[3]).statuses?.[0]?.code).toBe('OK');
    // An empty domain is a request error (docs/compat.md), INVALID_ARGUMENT with the reason.
    expect(answers[4]?.detail).toMatch(/domain/i);

    const [unknownMethod] = pythonCalls(service.ports.grpc, '/no.such.Service/Call', [
      Buffer.alloc(0),
    ]);
    expect(unknownMethod?.status).toBe(12);
    const [malformed] = pythonCalls(service.ports.grpc, RLS_PATH, [Buffer.from('ff', 'hex')]);
    expect(malformed?.status).toBe(3);
    expect(malformed?.detail).toMatch(/not a RateLimitRequest/);
  });

  it('counts every request of an h2load burst once, over several HTTP/2 connections', () => {
    const message = request('foreign', 'burst', 'b');
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), message]);
    frame.writeUInt32BE(message.length, 1);
    const body = path.join(runtime.base, 'rls-request.bin');
    writeFileSync(body, frame);
    const run = runProgram(
      'h2load',
      [
        '-n',
        '300',
        '-c',
        '3',
        '-m',
        '10',
        '-d',
        body,
        '-H',
        'content-type: application/grpc',
        '-H',
        'te: trailers',
        `http://127.0.0.1:${service.ports.grpc}${RLS_PATH}`,
      ],
      { timeout: 30_000 },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      /requests: 300 total, 300 started, 300 done, 300 succeeded, 0 failed/,
    );
    expect(run.stdout).toMatch(/status codes: 300 2xx/);
    const [after] = pythonCalls(service.ports.grpc, RLS_PATH, [request('foreign', 'burst', 'b')]);
    expect(decoded(after).statuses?.[0]).toMatchObject({ code: 'OK', limitRemaining: 1000 - 301 });
  });
});
