// Rig, RLQS caps shared fairly, against the built service: one peer (a remote address, however
// many streams it opens) that takes all RLQS_MAX_STREAMS or RLQS_MAX_BUCKETS lets it does not
// lock another Envoy out. The hostile peer connects from 127.0.0.2, the innocent Envoy from
// 127.0.0.3; both speak StreamRateLimitQuotas as Envoy's filter does on its first report (a new
// bucket alone, time_elapsed 0: global_client_impl.cc, createBucketImpl). The innocent Envoy's
// stream must be served (an assignment for its bucket) and not ended; the hostile peer's
// excess is refused, its served streams are not ended.
//
// Beside them, as in the other isolation rigs, an innocent client makes ShouldRateLimit calls
// on its own connection (from 127.0.0.4) before and during the attack: at least 99.5% OK, p99
// within max(3x its own before, 25 ms); and the service's RSS, read after a full collection
// (heap-probe.ts), is back within 10% + 16 MiB of before once the hostile peer has gone.
import type http2 from 'node:http2';
import { eventually } from '../helpers/eventually';
import { HeapProbe } from '../helpers/heap-probe';
import { connectFrom, RawQuotaStream } from '../helpers/rlqs-h2';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { afterMs, grpcLoad, grpcRequest, Latencies, report, round, type CallResult } from './rig';

jest.setTimeout(60_000);

const RESOURCE_EXHAUSTED = 8;
const runtime = runtimeDirForFile({
  'edge.yaml':
    'domain: edge\nquota_buckets:\n  - bucket: { name: api, tenant: "*" }\n    requests_per_unit: 100\n    unit: second\n',
});

const watchOf = (tenants: readonly string[]) => ({
  domain: 'edge',
  bucketQuotaUsages: tenants.map((tenant) => ({
    bucketId: { bucket: { name: 'api', tenant } },
    timeElapsed: { seconds: 0 },
    numRequestsAllowed: 1,
  })),
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const probe = new HeapProbe();
afterAll(() => {
  probe.dispose();
});

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', ...probe.env, ...env },
  });
  cleanups.push(() => service.stop());
  return service;
}

async function connect(port: number, from: string): Promise<http2.ClientHttp2Session> {
  const session = await connectFrom(port, from);
  cleanups.push(() => {
    session.destroy();
  });
  return session;
}

const CALL = grpcRequest('edge', [{ entries: [['k', 'v']] }]);

/** The innocent client's ShouldRateLimit calls, two at a time, until `until()`. */
function innocentCalls(
  session: http2.ClientHttp2Session,
  until: () => boolean,
): Promise<CallResult[]> {
  return grpcLoad({ sessions: [session], concurrency: 2, request: () => CALL, until });
}

function p99(results: readonly CallResult[]): number {
  const latencies = new Latencies();
  for (const r of results) latencies.add(r.answer.ms);
  return latencies.p(99);
}

/**
 * Runs `attack` with the innocent client calling beside it, then lets `leave` end the hostile
 * peer's connections; asserts what every isolation rig asserts of the innocent client and RSS,
 * and returns the figures for the report.
 */
async function innocentKept(
  service: ServiceProcess,
  attack: () => Promise<void>,
  leave: () => void,
): Promise<Record<string, string>> {
  const pid = service.pid ?? 0;
  const session = await connect(service.ports.grpc, '127.0.0.4');
  await innocentCalls(session, afterMs(1000));
  const before = await innocentCalls(session, afterMs(1500));
  const rssBefore = (await probe.collected(pid)).rss;
  let isOver = false;
  const minimum = afterMs(1000);
  const during = innocentCalls(session, () => isOver && minimum());
  try {
    await attack();
  } finally {
    isOver = true;
  }
  const calls = await during;
  leave();
  const rssAfter = (await probe.collected(pid)).rss;
  const ok = calls.filter((c) => c.answer.grpcStatus === 0).length;
  const limit = Math.max(3 * p99(before), 25);
  expect(calls.length).toBeGreaterThan(50);
  expect(ok / calls.length).toBeGreaterThanOrEqual(0.995);
  expect(p99(calls)).toBeLessThanOrEqual(limit);
  expect(rssAfter).toBeLessThanOrEqual(rssBefore * 1.1 + 16);
  return {
    'innocent p99 before / during (ms)': `${String(round(p99(before)))} / ${String(round(p99(calls)))}`,
    'innocent OK during': `${String(ok)}/${String(calls.length)}`,
    'RSS before / after, collected (MiB)': `${String(round(rssBefore))} / ${String(round(rssAfter))}`,
  };
}

/** The innocent Envoy's stream: watched, served, and not ended. */
async function innocentIsServed(port: number): Promise<RawQuotaStream> {
  const stream = new RawQuotaStream(await connect(port, '127.0.0.3'));
  stream.report(watchOf(['innocent']));
  await eventually(
    () => stream.isAssigned({ name: 'api', tenant: 'innocent' }) || stream.ended !== undefined,
    {
      what: "the innocent Envoy's assignment",
      timeoutMs: 10_000,
    },
  );
  expect(stream.ended).toBeUndefined();
  expect(stream.isAssigned({ name: 'api', tenant: 'innocent' })).toBe(true);
  return stream;
}

/** Refused on opening: one round trip, with room for a loaded machine. */
const REFUSED_WITHIN_MS = 2000;

test('a peer that opens all the RLQS_MAX_STREAMS it may does not lock another Envoy out', async () => {
  const MAX = 64;
  const service = await start({ RLQS_MAX_STREAMS: String(MAX) });
  const port = service.ports.grpc;
  let sessions: http2.ClientHttp2Session[] = [];
  let hostile: RawQuotaStream[] = [];
  let innocent: RawQuotaStream | undefined;
  let served: RawQuotaStream[] = [];
  let refused: RawQuotaStream[] = [];
  let answeredMs = 0;
  const figures = await innocentKept(
    service,
    async () => {
      // The hostile peer opens as many streams as it can, over two connections, each watching.
      sessions = [await connect(port, '127.0.0.2'), await connect(port, '127.0.0.2')];
      const opened = performance.now();
      hostile = Array.from({ length: MAX }, (_, i) => {
        const stream = new RawQuotaStream(sessions[i % 2] as http2.ClientHttp2Session);
        stream.report(watchOf([`h${i}`]));
        return stream;
      });
      await eventually(
        () => hostile.every((s) => s.ended !== undefined || s.responses.length > 0),
        { what: "the hostile peer's streams answered" },
      );
      answeredMs = performance.now() - opened;
      served = hostile.filter((s) => s.ended === undefined);
      refused = hostile.filter((s) => s.ended?.code === RESOURCE_EXHAUSTED);
      innocent = await innocentIsServed(port);
      // The newcomer's stream ended none of them; looked at before the hostile peer leaves,
      // when its streams end with its connections.
      expect(served.every((s) => s.ended === undefined)).toBe(true);
    },
    () => {
      for (const session of sessions) session.destroy();
    },
  );
  expect(refused[0]?.ended?.message).toContain('RLQS_MAX_STREAMS');
  expect(served.length + refused.length).toBe(MAX);
  expect(answeredMs).toBeLessThanOrEqual(REFUSED_WITHIN_MS);
  // What the hostile peer was refused is counted under the cap's name; its served streams live.
  expect(await service.stat('ratelimit.rlqs.refused.max_streams')).toBe(refused.length);
  report({
    test: 'rlqs-caps (streams)',
    tried: `one peer opens ${MAX} RLQS streams against RLQS_MAX_STREAMS=${MAX}, then another Envoy opens one; ShouldRateLimit calls from a third address throughout`,
    held: "the innocent Envoy's stream is served; the hostile peer keeps half, no served stream ended, the rest refused at once; innocent calls OK, p99 within max(3x before, 25 ms); RSS back",
    figures: {
      'hostile served': served.length,
      'hostile refused': refused.length,
      'all answered in (ms)': round(answeredMs),
      'innocent responses': innocent?.responses.length ?? 0,
      ...figures,
    },
  });
});

test('a peer that watches all the RLQS_MAX_BUCKETS it may does not lock another Envoy out', async () => {
  const MAX = 1000;
  const service = await start({ RLQS_MAX_BUCKETS: String(MAX) });
  const port = service.ports.grpc;
  let session: http2.ClientHttp2Session | undefined;
  let hostile: RawQuotaStream | undefined;
  let innocent: RawQuotaStream | undefined;
  let refused = 0;
  const figures = await innocentKept(
    service,
    async () => {
      session = await connect(port, '127.0.0.2');
      const stream = new RawQuotaStream(session);
      hostile = stream;
      stream.report(watchOf(Array.from({ length: MAX }, (_, i) => `h${i}`)));
      await eventually(() => stream.responses.length > 0 || stream.ended !== undefined, {
        what: "the hostile peer's assignments",
      });
      innocent = await innocentIsServed(port);
      expect(stream.ended).toBeUndefined();
      refused = await service.stat('ratelimit.rlqs.refused.max_buckets');
    },
    () => {
      session?.destroy();
    },
  );
  expect(hostile).toBeDefined();
  expect(refused).toBe(MAX / 2);
  report({
    test: 'rlqs-caps (buckets)',
    tried: `one peer's report watches ${MAX} ruled buckets against RLQS_MAX_BUCKETS=${MAX}, then another Envoy watches one; ShouldRateLimit calls from a third address throughout`,
    held: "the innocent Envoy's bucket is assigned; the hostile stream goes on with half; innocent calls OK, p99 within max(3x before, 25 ms); RSS back",
    figures: {
      'hostile usages refused': refused,
      'innocent responses': innocent?.responses.length ?? 0,
      ...figures,
    },
  });
});
