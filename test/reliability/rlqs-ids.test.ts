// Rig, RLQS bucket ids bounded in bytes, against the built service: 4 streams of a hostile peer
// (127.0.0.2) report a fresh 60 KiB bucket id in every message for 10 s, as fast as flow control
// lets them, in a domain whose rule governs those ids. Envoy's ids are a few short pairs (the
// filter's bucket_id_builder: names and values from headers or constants); a 60 KiB one is
// refused alone before it is decoded (RLQS_MAX_BUCKET_ID_BYTES), so the service's memory does
// not grow with them. Meanwhile an innocent Envoy (127.0.0.3, its own connection) watches a new
// bucket every second and must be assigned each within 1 s. The RSS before is taken after 5 s
// of the same traffic with short ids, so that it holds what the transport holds for it.
import type http2 from 'node:http2';
import { eventually } from '../helpers/eventually';
import { connectFrom, RawQuotaStream, reportFrame } from '../helpers/rlqs-h2';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { report, RssSampler, rssMb } from './rig';

jest.setTimeout(90_000);

const FLOOD_MS = 10_000;
const WARM_MS = 5000;
const ID_BYTES = 60 * 1024;
const HOSTILE_STREAMS = 4;
const COUNTER_DIGITS = 10;
const runtime = runtimeDirForFile({
  'edge.yaml':
    'domain: edge\nquota_buckets:\n  - bucket: { name: api, tenant: "*" }\n    requests_per_unit: 100\n    unit: second\n',
});

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const watchOf = (tenant: string) => ({
  domain: 'edge',
  bucketQuotaUsages: [
    {
      bucketId: { bucket: { name: 'api', tenant } },
      timeElapsed: { seconds: 0 },
      numRequestsAllowed: 1,
    },
  ],
});

async function connect(port: number, from: string): Promise<http2.ClientHttp2Session> {
  const session = await connectFrom(port, from);
  cleanups.push(() => {
    session.destroy();
  });
  return session;
}

/** A protobuf varint. */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  for (let v = value; ; v = Math.floor(v / 128)) {
    if (v < 128) {
      bytes.push(v);
      return Buffer.from(bytes);
    }
    bytes.push((v % 128) | 0x80);
  }
}

/**
 * A report of the same size as a hostile one whose 60 KiB are a field the report does not have
 * (field 15, skipped by every reader) beside a short fresh id: what the transport costs alone.
 */
function paddedReport(tenant: string): Buffer {
  const body = reportFrame(watchOf(tenant)).subarray(5);
  const padded = Buffer.concat([
    Buffer.from([(15 << 3) | 2]),
    varint(ID_BYTES),
    Buffer.alloc(ID_BYTES),
    body,
  ]);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(padded.length, 1);
  return Buffer.concat([head, padded]);
}

/**
 * Writes reports on `stream` as fast as flow control allows, until `isOver()`: the template
 * `make` returns for a marker, with a new counter in place of the marker in each message (so
 * the client's encoding does not limit the flood, and every id is fresh).
 */
async function flood(
  stream: RawQuotaStream,
  make: (marker: string) => Buffer,
  isOver: () => boolean,
): Promise<number> {
  const marker = '#'.repeat(COUNTER_DIGITS);
  const template = make(marker);
  const at = template.indexOf(marker);
  let sent = 0;
  while (!isOver() && stream.ended === undefined && !stream.stream.destroyed) {
    const message = Buffer.from(template);
    message.write(String(sent).padStart(COUNTER_DIGITS, '0'), at, 'latin1');
    sent += 1;
    stream.stream.write(message);
    // Keep a few messages queued: the flood is as fast as the service's flow control allows.
    if (stream.stream.writableLength > 4 * ID_BYTES)
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, 50);
        stream.stream.once('drain', done);
      });
  }
  return sent;
}

/** `HOSTILE_STREAMS` streams of a hostile peer flooding for `ms`; resolves to what they sent. */
async function floodFor(
  port: number,
  ms: number,
  make: (name: string) => (marker: string) => Buffer,
): Promise<{ readonly isOver: () => boolean; readonly done: Promise<number> }> {
  const sessions = [await connect(port, '127.0.0.2'), await connect(port, '127.0.0.2')];
  const endsAt = performance.now() + ms;
  const isOver = (): boolean => performance.now() >= endsAt;
  const floods = Array.from({ length: HOSTILE_STREAMS }, (_, i) =>
    flood(new RawQuotaStream(sessions[i % 2] as http2.ClientHttp2Session), make(`h${i}`), isOver),
  );
  const done = Promise.all(floods).then((sent) => sent.reduce((a, b) => a + b, 0));
  return { isOver, done };
}

test('4 streams flooding fresh 60 KiB bucket ids for 10 s: RSS grows under 64 MiB, an innocent watch is assigned within 1 s', async () => {
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory' },
  });
  cleanups.push(() => service.stop());
  const pid = service.pid ?? 0;
  const port = service.ports.grpc;
  const innocentSession = await connect(port, '127.0.0.3');
  const coldMb = rssMb(pid);

  // The transport's own working set for this traffic first: the same flood of 60 KiB reports,
  // their bytes in a field no reader keeps and their ids short. A Node process reading 60 KiB
  // messages holds about 64 MiB of garbage buffers between two collections (V8 collects once
  // external memory grows by its 64 MiB soft limit), ids or not: that is the transport's, and
  // the bound below is on what the ids add to it.
  const warm = await floodFor(
    port,
    WARM_MS,
    (name) => (marker) => paddedReport(`${name}-${marker}`),
  );
  const warmSent = await warm.done;
  const beforeMb = rssMb(pid);
  const rss = new RssSampler(pid);
  const hostile = await floodFor(
    port,
    FLOOD_MS,
    (name) => (marker) => reportFrame(watchOf(`${name}-${marker}-${'x'.repeat(ID_BYTES)}`)),
  );

  // The innocent Envoy watches a new bucket every second of the flood.
  const waits: number[] = [];
  for (let n = 0; !hostile.isOver(); n++) {
    const stream = new RawQuotaStream(innocentSession);
    const bucket = { name: 'api', tenant: `innocent-${n}` };
    const startedMs = performance.now();
    stream.report(watchOf(bucket.tenant));
    await eventually(() => stream.isAssigned(bucket) || stream.ended !== undefined, {
      what: `innocent watch ${n}`,
      timeoutMs: 5000,
      intervalMs: 5,
    });
    waits.push(performance.now() - startedMs);
    expect(stream.ended).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const sent = await hostile.done;
  rss.stop();

  // Every hostile id is refused alone once the messages still in flight are read.
  let refused = 0;
  await eventually(
    async () => {
      refused = await service.stat('ratelimit.rlqs.refused.max_bucket_id_bytes');
      return refused === sent;
    },
    { what: 'every hostile id refused', timeoutMs: 10_000 },
  );
  const growthMb = rss.peakMb - beforeMb;
  report({
    test: 'rlqs-ids',
    tried: `${HOSTILE_STREAMS} streams report a fresh ${ID_BYTES / 1024} KiB bucket id per message for ${FLOOD_MS / 1000} s (after ${WARM_MS / 1000} s of the same traffic with short ids); an innocent Envoy watches a new bucket every second`,
    held: 'RSS grows under 64 MiB over the warmed transport; each innocent watch is assigned within 1 s',
    figures: {
      'warm-up reports': warmSent,
      'reports sent': sent,
      'ids refused': refused,
      'RSS cold / warmed / peak MiB': `${Math.round(coldMb)} / ${Math.round(beforeMb)} / ${Math.round(rss.peakMb)}`,
      'innocent waits ms (max)': Math.round(Math.max(...waits)),
    },
  });
  expect(growthMb).toBeLessThan(64);
  expect(waits.length).toBeGreaterThanOrEqual(5);
  expect(Math.max(...waits)).toBeLessThanOrEqual(1000);
  // The flood was real: thousands of ids, each refused alone (the streams were not ended).
  expect(refused).toBeGreaterThan(500);
});
