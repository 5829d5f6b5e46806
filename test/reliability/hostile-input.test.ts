// Rig, area 3: hostile input. While innocent gRPC traffic runs, the service is sent fuzzed
// gRPC bytes and /json bodies (fast-check), malformed request targets and methods on every
// listener, HTTP/2 floods, a YAML alias bomb and deeply nested descriptors in a file and in an
// xDS resource: it stays up, answers clean errors, stays under its memory ceiling, and the
// innocent traffic's p99 is reported.
import http2 from 'node:http2';
import net from 'node:net';
import fc from 'fast-check';
import { AdsServer, deepRateLimitConfig, RATE_LIMIT_CONFIG_TYPE_URL } from '../helpers/ads-server';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { connect, frame, rawCall, RLS_PATH } from '../helpers/h2-raw';
import { rawRequest } from '../helpers/raw-http';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import {
  byMode,
  grpcLoad,
  grpcRequest,
  Latencies,
  report,
  round,
  RssSampler,
  type CallResult,
} from './rig';
import { hostileBodies, hostileMessages } from './hostile-arbitraries';

jest.setTimeout(byMode(120_000, 900_000));

const RSS_CEILING_MB = 300;
const HEADER_TIMEOUT_MS = 1500;
const MAX_STREAMS = 100;
const FUZZ_RUNS = byMode(300, 5000);
const UNEXPECTED = 'ratelimit.service.unexpected_error';

const GOOD = `
domain: hostile
descriptors:
  - key: innocent
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: user
    detailed_metric: true
    rate_limit: { unit: second, requests_per_unit: 5 }
`;
const runtime = runtimeDirForFile({ 'hostile.yaml': GOOD });
const cleanup = collectCleanups();

let service: ServiceProcess;
let rss: RssSampler;
const innocent = new Latencies();
const innocentFailures: CallResult[] = [];
let stopInnocent = false;
let innocentLoad: Promise<CallResult[]>;
const figures: Record<string, string | number> = {};

beforeAll(async () => {
  service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      HEADER_TIMEOUT: `${HEADER_TIMEOUT_MS}ms`,
      GRPC_MAX_CONCURRENT_STREAMS: String(MAX_STREAMS),
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
    },
  });
  cleanup(() => service.stop());
  rss = new RssSampler(service.pid ?? 0);
  const session = await connect(service.ports.grpc);
  cleanup(() => {
    session.destroy();
  });
  innocentLoad = grpcLoad({
    sessions: [session],
    concurrency: 4,
    request: (i) => grpcRequest('hostile', [{ entries: [['innocent', `i${i % 50}`]] }]),
    until: () => stopInnocent,
    onResult: (r) => {
      innocent.add(r.answer.ms);
      if (r.answer.grpcStatus !== 0) innocentFailures.push(r);
    },
  });
});

afterAll(async () => {
  stopInnocent = true;
  await innocentLoad;
  rss.stop();
});

async function expectAliveAndClean(): Promise<void> {
  expect((await fetch(service.url('/healthcheck'))).status).toBe(200);
  expect(await service.stat(UNEXPECTED)).toBe(0);
}

it('answers fuzzed gRPC request bytes with a clean status', async () => {
  const session = await connect(service.ports.grpc);
  try {
    const statuses = new Map<number | undefined, number>();
    await fc.assert(
      fc.asyncProperty(hostileMessages(), async (bytes) => {
        const answer = await rawCall(session, frame(Buffer.from(bytes)), { 'grpc-timeout': '5S' });
        statuses.set(answer.grpcStatus, (statuses.get(answer.grpcStatus) ?? 0) + 1);
        // OK, INVALID_ARGUMENT, or RESOURCE_EXHAUSTED: never INTERNAL, never no answer.
        expect([0, 3, 8]).toContain(answer.grpcStatus);
      }),
      { numRuns: FUZZ_RUNS },
    );
    figures['fuzzed gRPC calls'] = FUZZ_RUNS;
    figures['gRPC answers'] = [...statuses].map(([s, n]) => `${String(s)}×${n}`).join(' ');
  } finally {
    session.destroy();
  }
  await expectAliveAndClean();
});

it('answers fuzzed /json bodies with 200, 400, 413 or 429', async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(hostileBodies(), async (body) => {
      const res = await fetch(service.url('/json'), { method: 'POST', body });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect([200, 400, 413, 429]).toContain(res.status);
    }),
    { numRuns: FUZZ_RUNS },
  );
  figures['fuzzed /json bodies'] = FUZZ_RUNS;
  figures['/json answers'] = [...statuses].map(([s, n]) => `${s}×${n}`).join(' ');
  await expectAliveAndClean();
});

const TARGETS = ['//', '//:', '//[', 'http://', '*', '/%zz', `/${'a'.repeat(60_000)}`, '/\u00ff'];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'BREW', 'PRI', 'CONNECT', 'G\tET'];

it('answers malformed request targets and methods on every HTTP/1 listener without a 5xx', async () => {
  const listeners = {
    http: service.ports.http,
    debug: service.ports.debug,
    metrics: service.ports.metrics,
  };
  let tried = 0;
  for (const [name, port] of Object.entries(listeners)) {
    for (const method of METHODS) {
      for (const target of TARGETS) {
        const { status } = await rawRequest(port, `${method} ${target} HTTP/1.1`);
        tried += 1;
        // An answer (node's parser answers 400 for what it cannot read), never a server error.
        expect({
          name,
          method,
          target: target.slice(0, 20),
          ok: status !== undefined && status < 500,
        }).toEqual({
          name,
          method,
          target: target.slice(0, 20),
          ok: true,
        });
      }
    }
  }
  figures['malformed HTTP/1 requests'] = tried;
  await expectAliveAndClean();
});

it('answers malformed paths and methods on the gRPC listener', async () => {
  const session = await connect(service.ports.grpc);
  let tried = 0;
  try {
    for (const method of ['GET', 'PUT', 'BREW', 'POST']) {
      for (const path of ['//', '*', '/%zz', `/${'a'.repeat(10_000)}`, RLS_PATH]) {
        const answer = await rawCall(session, frame(Buffer.alloc(0)), {
          ':method': method,
          ':path': path,
        });
        tried += 1;
        expect(
          answer.httpStatus === 200
            ? answer.grpcStatus !== undefined
            : (answer.httpStatus ?? 0) < 500,
        ).toBe(true);
      }
    }
  } finally {
    session.destroy();
  }
  figures['malformed gRPC calls'] = tried;
  await expectAliveAndClean();
});

/** Resolves when every one of `closing` has closed, or fails after `ms`. */
async function allClosed(closing: readonly Promise<unknown>[], ms: number, what: string) {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} were still open after ${ms} ms`));
    }, ms);
  });
  try {
    await Promise.race([Promise.all(closing), limit]);
  } finally {
    clearTimeout(timer);
  }
}

it('survives HTTP/2 floods: many streams, unfinished bodies, no preface, RST bursts', async () => {
  const port = service.ports.grpc;
  // 1. Connections that never send the HTTP/2 preface.
  const silent = Array.from({ length: byMode(200, 1000) }, () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.resume();
    return new Promise((resolve) => socket.once('close', resolve));
  });
  const silentStarted = performance.now();
  await allClosed(silent, HEADER_TIMEOUT_MS + 5000, 'connections without a preface');
  figures['no-preface connections'] = silent.length;
  figures['all cut after, ms'] = round(performance.now() - silentStarted, 0);

  // 2. More streams than GRPC_MAX_CONCURRENT_STREAMS, each with half a message, never ended.
  const outcomes = new Map<string, number>();
  const streams: Promise<void>[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  const half = grpcRequest('hostile', [{ entries: [['innocent', 'x']] }]).subarray(0, 8);
  for (let c = 0; c < 3; c++) {
    const session = await connect(port);
    sessions.push(session);
    for (let i = 0; i < MAX_STREAMS + 50; i++) {
      const stream = session.request({
        ':method': 'POST',
        ':path': RLS_PATH,
        'content-type': 'application/grpc',
      });
      streams.push(
        new Promise((resolve) => {
          let outcome = 'closed';
          stream.on('response', (h) => {
            outcome = `grpc-status ${String(h['grpc-status'])}`;
          });
          stream.on('error', (err: Error & { code?: string }) => {
            outcome = err.code ?? err.message;
          });
          stream.on('close', () => {
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
            resolve();
          });
        }),
      );
      stream.write(half);
    }
  }
  await allClosed(streams, HEADER_TIMEOUT_MS + 10_000, 'unfinished streams');
  for (const session of sessions) session.destroy();
  figures['unfinished streams'] = streams.length;
  figures['their ends'] = [...outcomes].map(([o, n]) => `${o}×${n}`).join(', ');

  // 3. Rapid reset: streams opened and cancelled at once, in bursts.
  const burst = await connect(port);
  burst.on('error', () => undefined);
  let resets = 0;
  for (let round = 0; round < byMode(20, 200) && !burst.closed && !burst.destroyed; round++) {
    for (let i = 0; i < 250; i++) {
      try {
        const stream = burst.request({
          ':method': 'POST',
          ':path': RLS_PATH,
          'content-type': 'application/grpc',
        });
        stream.on('error', () => undefined);
        stream.close(http2.constants.NGHTTP2_CANCEL);
        resets += 1;
      } catch {
        break;
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  burst.destroy();
  figures['RST_STREAM sent'] = resets;

  // 4. Bytes that are not HTTP/2 at all.
  const garbage = net.connect(port, '127.0.0.1');
  garbage.on('error', () => undefined);
  garbage.resume();
  garbage.write(Buffer.alloc(64 * 1024, 0x41));
  await allClosed(
    [new Promise((resolve) => garbage.once('close', resolve))],
    5000,
    'a garbage connection',
  );

  await expectAliveAndClean();
});

it('refuses a YAML alias bomb and descriptors nested too deep in a file, serving on', async () => {
  const errors = async (): Promise<number> => service.stat('ratelimit.service.config_load_error');
  const before = await errors();
  const bomb = ['domain: bomb', 'descriptors:', '  - &d0 {key: k0}'];
  for (let i = 1; i < 40; i++)
    bomb.push(`  - &d${i} {key: k${i}, descriptors: [*d${i - 1}, *d${i - 1}]}`);
  const started = performance.now();
  runtime.write({ 'bomb.yaml': bomb.join('\n') });
  await eventually(async () => (await errors()) > before, { what: 'the bomb to be refused' });
  figures['alias bomb refused after, ms'] = round(performance.now() - started, 0);
  runtime.remove('bomb.yaml');
  let deep = 'domain: deep\ndescriptors:\n';
  let indent = '  ';
  for (let i = 0; i < 2000; i++) {
    deep += `${indent}- key: k${i}\n${indent}  descriptors:\n`;
    indent += '    ';
  }
  const refused = await errors();
  runtime.write({ 'deep.yaml': deep });
  await eventually(async () => (await errors()) > refused, { what: 'the deep file to be refused' });
  runtime.remove('deep.yaml');
  // The good configuration served throughout, and loads again once the bad files are gone.
  const loaded = await service.stat('ratelimit.service.config_load_success');
  runtime.write({ 'hostile.yaml': GOOD });
  await eventually(
    async () => (await service.stat('ratelimit.service.config_load_success')) > loaded,
    {
      what: 'a good reload',
    },
  );
  await expectAliveAndClean();
});

it('NACKs an xDS resource nested 2,000 levels deep, serving on', async () => {
  const ads = await AdsServer.start();
  cleanup(() => ads.close());
  const xds = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
      FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
    },
    waitFor: 'listening',
  });
  cleanup(() => xds.stop());
  await eventually(() => ads.rateLimitRequests(0).length === 1, { what: 'the first xDS request' });
  ads.streams[0]?.write({
    version_info: 'v1',
    type_url: RATE_LIMIT_CONFIG_TYPE_URL,
    nonce: 'n1',
    resources: [
      {
        type_url: RATE_LIMIT_CONFIG_TYPE_URL,
        value: Buffer.from(deepRateLimitConfig('deep', 2000)),
      },
    ],
  });
  await eventually(() => ads.rateLimitRequests(0).length === 2, { what: 'the NACK' });
  expect(ads.rateLimitRequests(0)[1]?.error_detail?.message).toBeDefined();
  expect((await fetch(xds.url('/healthcheck'))).status).toBe(200);
  expect(await xds.stat(UNEXPECTED)).toBe(0);
  figures['deep xDS resource'] = 'NACKed';
});

it('kept innocent traffic flowing and memory under the ceiling throughout', () => {
  expect(innocentFailures).toHaveLength(0);
  expect(rss.peakMb).toBeLessThan(RSS_CEILING_MB);
  report({
    test: 'hostile input',
    tried: `fast-check fuzzing of gRPC request bytes and /json bodies (random, truncated, nested, huge, unicode, control characters, hits_addend extremes), malformed targets and methods on every listener, HTTP/2 floods (no preface, ${MAX_STREAMS + 50} unfinished streams on each of 3 connections, RST bursts, garbage bytes), a YAML alias bomb, 2,000-deep descriptors in a file and in an xDS resource`,
    held: `process up and healthy, only clean statuses (no 5xx, no INTERNAL, unexpected_error 0), every innocent call OK, RSS under ${RSS_CEILING_MB} MiB`,
    figures: {
      ...figures,
      'innocent calls': innocent.count,
      'innocent p50 ms': round(innocent.p(50)),
      'innocent p99 ms': round(innocent.p(99)),
      'peak RSS MiB': round(rss.peakMb),
    },
  });
});
