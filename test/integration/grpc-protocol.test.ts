// The gRPC front end speaks gRPC over HTTP/2 itself, so its protocol edges are tested here
// against both grpc-js and a bare HTTP/2 client that sends what a proxy might; on the
// service's own HTTP/2 and on node:http2 (GRPC_HTTP2=node) alike.
import http2 from 'node:http2';
import zlib from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { loadPackageDefinition } from '../../src/lib/proto';
import { MemoryLogger } from '../../src/lib/logger';
import type { RunningService } from '../../src/main';
import { startInProcess } from '../helpers/in-process-service';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { loopbackServiceEnv } from '../helpers/ports';
import { RuntimeDir } from '../helpers/runtime-dir';

const PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
const rls = (
  loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
    'envoy.service.ratelimit.v3.RateLimitService'
  ] as unknown as {
    ShouldRateLimit: {
      requestSerialize: (value: unknown) => Buffer;
      responseDeserialize: (bytes: Buffer) => { overallCode?: string; statuses?: unknown[] };
    };
  }
).ShouldRateLimit;

let address: string;

function framed(message: Buffer, flag = 0): Buffer {
  const header = Buffer.alloc(5);
  header[0] = flag;
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

interface RawAnswer {
  readonly status: number;
  readonly headers: http2.IncomingHttpHeaders;
  readonly trailers: http2.IncomingHttpHeaders;
  readonly body: Buffer;
  /** grpc-status from the trailers, or from the headers of a trailers-only answer. */
  readonly grpcStatus: string | undefined;
  readonly grpcMessage: string | undefined;
}

/** One request over a fresh HTTP/2 connection, the way a proxy other than grpc-js sends it. */
function raw(
  headers: http2.OutgoingHttpHeaders,
  body: Buffer | undefined,
  options: { readonly abort?: boolean } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on('error', reject);
    const req = session.request({
      ':method': 'POST',
      ':path': PATH,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...headers,
    });
    let responseHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    req.on('response', (h) => (responseHeaders = h));
    req.on('trailers', (t) => (trailers = t));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('close', () => {
      session.close();
      const pick = (name: string): string | undefined => {
        const value = trailers[name] ?? responseHeaders[name];
        return value === undefined ? undefined : String(value);
      };
      resolve({
        status: Number(responseHeaders[':status']),
        headers: responseHeaders,
        trailers,
        body: Buffer.concat(chunks),
        grpcStatus: pick('grpc-status'),
        grpcMessage: pick('grpc-message'),
      });
    });
    if (options.abort === true) {
      req.write(body ?? Buffer.alloc(0));
      req.close(http2.constants.NGHTTP2_CANCEL);
      return;
    }
    req.end(body);
  });
}

const validRequest = (): Buffer => rls.requestSerialize(rlsRequest('p', [[['k', 'raw']]]));

describe.each(['own', 'node'])('on GRPC_HTTP2=%s', (http2Impl) => {
  let runtime: RuntimeDir;
  let service: RunningService;
  const logger = new MemoryLogger();

  beforeAll(async () => {
    runtime = new RuntimeDir({
      'p.yaml':
        'domain: p\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n',
    });
    service = await startInProcess({
      env: loopbackServiceEnv({ ...runtime.env(), GRPC_HTTP2: http2Impl }),
      logger,
    });
    address = `127.0.0.1:${service.ports.grpc}`;
  });

  afterAll(async () => {
    await service.stop();
    runtime.destroy();
  });

  it('serves on the HTTP/2 GRPC_HTTP2 names, saying so when it is node:http2', () => {
    const said = logger.lines.some((line) => line.message.includes('node:http2 (GRPC_HTTP2=node)'));
    expect(said).toBe(http2Impl === 'node');
  });

  describe('answers', () => {
    it('a request from a bare HTTP/2 client: headers, one message, then grpc-status 0 in trailers', async () => {
      const answer = await raw({}, framed(validRequest()));
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/grpc');
      expect(answer.trailers['grpc-status']).toBe('0');
      expect(answer.body[0]).toBe(0);
      expect(answer.body.readUInt32BE(1)).toBe(answer.body.length - 5);
      expect(rls.responseDeserialize(answer.body.subarray(5)).overallCode).toBe('OK');
    });

    it('answers with the headers a gRPC server sends, and no Date (the reference sends none)', async () => {
      const answered = await raw({}, framed(validRequest()));
      const refused = await raw({}, framed(Buffer.alloc(0), 1));
      for (const answer of [answered, refused]) {
        expect(Object.keys(answer.headers).sort()).toEqual([
          ':status',
          'content-type',
          'grpc-accept-encoding',
          ...(answer === refused ? ['grpc-message', 'grpc-status'] : []),
        ]);
      }
    });

    it('a request split over many DATA frames', async () => {
      const whole = framed(validRequest());
      const answer = await new Promise<RawAnswer>((resolve, reject) => {
        const session = http2.connect(`http://${address}`);
        const req = session.request({
          ':method': 'POST',
          ':path': PATH,
          'content-type': 'application/grpc',
        });
        const chunks: Buffer[] = [];
        let trailers: http2.IncomingHttpHeaders = {};
        req.on('trailers', (t) => (trailers = t));
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('error', reject);
        req.on('close', () => {
          session.close();
          resolve({
            status: 200,
            headers: {},
            trailers,
            body: Buffer.concat(chunks),
            grpcStatus: String(trailers['grpc-status']),
            grpcMessage: undefined,
          });
        });
        for (const byte of whole) req.write(Buffer.from([byte]));
        req.end();
      });
      expect(answer.grpcStatus).toBe('0');
      expect(rls.responseDeserialize(answer.body.subarray(5)).overallCode).toBe('OK');
    });

    it.each(['gzip', 'deflate'] as const)('a %s-compressed request', async (encoding) => {
      const message = validRequest();
      const compressed = encoding === 'gzip' ? zlib.gzipSync(message) : zlib.deflateSync(message);
      const answer = await raw({ 'grpc-encoding': encoding }, framed(compressed, 1));
      expect(answer.grpcStatus).toBe('0');
      expect(rls.responseDeserialize(answer.body.subarray(5)).overallCode).toBe('OK');
    });

    it('a grpc-js client that compresses its requests', async () => {
      const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
        'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
      });
      try {
        const response = await new Promise<Buffer>((resolve, reject) => {
          client.makeUnaryRequest(
            PATH,
            (b: Buffer) => b,
            (b: Buffer) => b,
            validRequest(),
            (err, res) => {
              if (err !== null) reject(err);
              else resolve(res as Buffer);
            },
          );
        });
        expect(rls.responseDeserialize(response).overallCode).toBe('OK');
      } finally {
        client.close();
      }
    });

    it('with a well-formed grpc-timeout the call is answered in time', async () => {
      const answer = await raw({ 'grpc-timeout': '5S' }, framed(validRequest()));
      expect(answer.grpcStatus).toBe('0');
    });
  });

  describe('refuses with a clean status and keeps serving', () => {
    afterEach(async () => {
      // Whatever the previous case sent, the next ordinary call still works.
      const client = new RlsClient(address);
      try {
        expect(
          (await client.shouldRateLimit(rlsRequest('p', [[['k', 'after']]]))).overallCode,
        ).toBe('OK');
      } finally {
        client.close();
      }
    });

    it('a method the server does not have: UNIMPLEMENTED, trailers only', async () => {
      const answer = await raw(
        { ':path': '/envoy.service.ratelimit.v3.RateLimitService/Nope' },
        framed(Buffer.alloc(0)),
      );
      expect(answer.status).toBe(200);
      expect(answer.headers['grpc-status']).toBe(String(grpc.status.UNIMPLEMENTED));
      expect(answer.grpcMessage).toContain('/envoy.service.ratelimit.v3.RateLimitService/Nope');
      expect(answer.body.length).toBe(0);
    });

    it('a content type that is not gRPC: HTTP 415', async () => {
      const answer = await raw({ 'content-type': 'application/json' }, Buffer.from('{}'));
      expect(answer.status).toBe(415);
    });

    it('a method other than POST: HTTP 405', async () => {
      const answer = await raw({ ':method': 'GET' }, undefined);
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
    });

    it('an encoding it does not read: UNIMPLEMENTED, naming the ones it does', async () => {
      const answer = await raw({ 'grpc-encoding': 'snappy' }, framed(validRequest(), 1));
      expect(answer.grpcStatus).toBe(String(grpc.status.UNIMPLEMENTED));
      expect(answer.grpcMessage).toBe(
        'grpc-encoding snappy is not supported; use one of identity,deflate,gzip',
      );
      expect(answer.headers['grpc-accept-encoding']).toBe('identity,deflate,gzip');
    });

    it('a compressed flag without an encoding: INTERNAL', async () => {
      const answer = await raw({}, framed(validRequest(), 1));
      expect([answer.grpcStatus, answer.grpcMessage]).toEqual([
        String(grpc.status.INTERNAL),
        'a compressed message arrived with grpc-encoding identity',
      ]);
    });

    it('bytes that do not decompress: INTERNAL', async () => {
      const answer = await raw({ 'grpc-encoding': 'gzip' }, framed(Buffer.from('not gzip'), 1));
      expect([answer.grpcStatus, answer.grpcMessage]).toEqual([
        String(grpc.status.INTERNAL),
        'the gzip message does not decompress',
      ]);
    });

    it('no message at all, or two: INTERNAL', async () => {
      const none = await raw({}, Buffer.alloc(0));
      expect([none.grpcStatus, none.grpcMessage]).toEqual([
        String(grpc.status.INTERNAL),
        'the request carries no message',
      ]);
      const two = await raw({}, Buffer.concat([framed(validRequest()), framed(validRequest())]));
      expect([two.grpcStatus, two.grpcMessage]).toEqual([
        String(grpc.status.INTERNAL),
        'a unary call carries more than one message',
      ]);
    });

    it('a message cut short: INTERNAL', async () => {
      const whole = framed(validRequest());
      const answer = await raw({}, whole.subarray(0, whole.length - 2));
      expect([answer.grpcStatus, answer.grpcMessage]).toEqual([
        String(grpc.status.INTERNAL),
        'the request message is cut short',
      ]);
    });

    it('a message over MAX_REQUEST_BYTES (1 MiB), announced or sent: RESOURCE_EXHAUSTED', async () => {
      const announced = Buffer.alloc(5);
      announced.writeUInt32BE(1024 * 1024 + 1, 1);
      const byHeader = await raw({}, announced);
      expect(byHeader.grpcStatus).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
      const sent = await raw({}, framed(Buffer.alloc(1024 * 1024 + 1)));
      expect(sent.grpcStatus).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
    });

    it('a gzip bomb that inflates past MAX_REQUEST_BYTES: RESOURCE_EXHAUSTED', async () => {
      const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024));
      const answer = await raw({ 'grpc-encoding': 'gzip' }, framed(bomb, 1));
      expect([answer.grpcStatus, answer.grpcMessage]).toEqual([
        String(grpc.status.RESOURCE_EXHAUSTED),
        'the request message is larger than the 1048576 bytes accepted (MAX_REQUEST_BYTES)',
      ]);
    });

    it('bytes that are not a RateLimitRequest: INVALID_ARGUMENT naming the fault', async () => {
      const answer = await raw({}, framed(Buffer.from([0x0a, 0x09, 0x61])));
      expect([answer.grpcStatus, answer.grpcMessage]).toEqual([
        String(grpc.status.INVALID_ARGUMENT),
        'the request is not a RateLimitRequest: a field runs past the end of the message',
      ]);
    });

    it('a limit override with a unit outside the enum: INVALID_ARGUMENT naming the descriptor', async () => {
      const answer = await raw(
        {},
        framed(
          rls.requestSerialize({
            domain: 'p',
            descriptors: [{ entries: [], limit: { requestsPerUnit: 1, unit: 9 } }],
          }),
        ),
      );
      expect(answer.grpcStatus).toBe(String(grpc.status.INVALID_ARGUMENT));
      expect(answer.grpcMessage).toBe(
        'descriptors[0].limit.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR',
      );
    });

    it('a call the client cancels half-way', async () => {
      await expect(
        raw({}, framed(validRequest()).subarray(0, 3), { abort: true }),
      ).resolves.toBeDefined();
    });
  });
});
