// Rig, RLQS caps shared fairly, against the built service: one peer (a remote address, however
// many streams it opens) that takes all RLQS_MAX_STREAMS or RLQS_MAX_BUCKETS lets it does not
// lock another Envoy out. The hostile peer connects from 127.0.0.2, the innocent Envoy from
// 127.0.0.3; both speak StreamRateLimitQuotas as Envoy's filter does on its first report (a new
// bucket alone, time_elapsed 0: global_client_impl.cc, createBucketImpl). The innocent Envoy's
// stream must be served (an assignment for its bucket) and not ended; the hostile peer's
// excess is refused, its served streams are not ended.
import type http2 from 'node:http2';
import { eventually } from '../helpers/eventually';
import { connectFrom, RawQuotaStream } from '../helpers/rlqs-h2';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { report } from './rig';

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

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', ...env },
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

test('a peer that opens all the RLQS_MAX_STREAMS it may does not lock another Envoy out', async () => {
  const MAX = 64;
  const service = await start({ RLQS_MAX_STREAMS: String(MAX) });
  const port = service.ports.grpc;
  // The hostile peer opens as many streams as it can, over two connections, each watching.
  const sessions = [await connect(port, '127.0.0.2'), await connect(port, '127.0.0.2')];
  const hostile = Array.from({ length: MAX }, (_, i) => {
    const stream = new RawQuotaStream(sessions[i % 2] as http2.ClientHttp2Session);
    stream.report(watchOf([`h${i}`]));
    return stream;
  });
  await eventually(() => hostile.every((s) => s.ended !== undefined || s.responses.length > 0), {
    what: "the hostile peer's streams answered",
  });
  const innocent = await innocentIsServed(port);
  const served = hostile.filter((s) => s.ended === undefined);
  const refused = hostile.filter((s) => s.ended?.code === RESOURCE_EXHAUSTED);
  expect(refused[0]?.ended?.message).toContain('RLQS_MAX_STREAMS');
  expect(served.length + refused.length).toBe(MAX);
  // What the hostile peer was refused is counted under the cap's name; its served streams live.
  expect(await service.stat('ratelimit.rlqs.refused.max_streams')).toBe(refused.length);
  expect(served.every((s) => s.ended === undefined)).toBe(true);
  report({
    test: 'rlqs-caps (streams)',
    tried: `one peer opens ${MAX} RLQS streams against RLQS_MAX_STREAMS=${MAX}, then another Envoy opens one`,
    held: "the innocent Envoy's stream is served; the hostile peer keeps half, no served stream ended",
    figures: {
      'hostile served': served.length,
      'hostile refused': refused.length,
      'innocent responses': innocent.responses.length,
    },
  });
});

test('a peer that watches all the RLQS_MAX_BUCKETS it may does not lock another Envoy out', async () => {
  const MAX = 1000;
  const service = await start({ RLQS_MAX_BUCKETS: String(MAX) });
  const port = service.ports.grpc;
  const hostile = new RawQuotaStream(await connect(port, '127.0.0.2'));
  hostile.report(watchOf(Array.from({ length: MAX }, (_, i) => `h${i}`)));
  await eventually(() => hostile.responses.length > 0 || hostile.ended !== undefined, {
    what: "the hostile peer's assignments",
  });

  const innocent = await innocentIsServed(port);
  expect(hostile.ended).toBeUndefined();
  const refused = await service.stat('ratelimit.rlqs.refused.max_buckets');
  expect(refused).toBe(MAX / 2);
  report({
    test: 'rlqs-caps (buckets)',
    tried: `one peer's report watches ${MAX} ruled buckets against RLQS_MAX_BUCKETS=${MAX}, then another Envoy watches one`,
    held: "the innocent Envoy's bucket is assigned; the hostile stream goes on with half",
    figures: {
      'hostile usages refused': refused,
      'innocent responses': innocent.responses.length,
    },
  });
});
