// Rig, what one RLQS client can take from the others through its streams, against the built
// service: a report left unfinished byte by byte, and a connection that never reads what it is
// sent. While each attack runs an innocent client calls ShouldRateLimit on its own connection
// and keeps its calls and its latency; the hostile streams and connections are ended within
// their stated bounds (MESSAGE_TIMEOUT, RLQS_FIRST_MESSAGE_TIMEOUT, GRPC_UNSENT_TIMEOUT, set
// short here so the run is quick); and RSS comes back once they have been.
//
// The peer: Envoy's rate_limit_quota filter opens its stream from createBucketImpl
// (source/extensions/filters/http/rate_limit_quota/global_client_impl.cc) and sends the new
// bucket's report in the same call, and on a stream it starts again from onSendReportsTimer
// it sends that tick's report at once: an Envoy's first report follows its stream's opening
// within a round trip, and later ones come every 5 s (test/helpers/rlqs-envoy.ts). Envoy reads
// its stream as responses arrive (its gRPC client hands each message to
// onReceiveMessage), so what waits for it is at most what is in flight.
import net from 'node:net';
import type http2 from 'node:http2';
import { messageType } from '../../src/lib/proto';
import { RLQS_PROTO } from '../../src/quota';
import { eventually } from '../helpers/eventually';
import { cpuSeconds } from '../helpers/h2-flood-rig';
import { END_HEADERS, frame, PREFACE, request, settings, T } from '../helpers/h2-frames';
import { connect, frame as grpcFrame, type RawAnswer } from '../helpers/h2-raw';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { HeapProbe } from '../helpers/heap-probe';
import { ServiceProcess } from '../helpers/service-process';
import { afterMs, byMode, grpcLoad, grpcRequest, Latencies, report, round, rssMb } from './rig';

jest.setTimeout(byMode(120_000, 300_000));

const RLQS_PATH = '/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';
const runtime = runtimeDirForFile({
  'f.yaml':
    'domain: f\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n',
  'q.yaml':
    'domain: q\nquota_buckets:\n  - bucket: { name: api, id: "*" }\n    requests_per_unit: 1000\n    unit: second\n',
});
const BODY = grpcRequest('f', [{ entries: [['k', 'v']] }]);
const OPEN_RLQS = request(RLQS_PATH, [
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);
const reportsType = messageType(
  RLQS_PROTO,
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);

/**
 * One RateLimitQuotaUsageReports of `buckets` buckets, gRPC-framed: buckets of stream `stream`
 * alone, or shared by every stream (`isShared`), each with `allowed` requests over a second
 * (over none when `allowed` is 0: a new bucket's first report).
 */
function reports(stream: number, buckets: number, allowed = 0, isShared = false, from = 0): Buffer {
  const usages = Array.from({ length: buckets }, (_, i) => i + from).map((b) => ({
    bucketId: {
      bucket: { name: 'api', id: isShared ? `b${String(b)}` : `s${String(stream)}-b${String(b)}` },
    },
    timeElapsed: { seconds: allowed === 0 ? 0 : 1 },
    numRequestsAllowed: Math.max(1, allowed),
  }));
  const message = reportsType.encode(
    reportsType.fromObject({ domain: 'q', bucketQuotaUsages: usages }),
  );
  return grpcFrame(Buffer.from(message.finish()));
}

/**
 * DATA frames of one byte each carrying `bytes` on each of streams `ids`, taking turns, so that
 * every stream's message begins at once.
 */
function oneByteFrames(ids: readonly number[], bytes: Buffer): Buffer {
  const out = Buffer.alloc(10 * bytes.length * ids.length);
  let at = 0;
  for (const byte of bytes) {
    for (const id of ids) {
      out[at + 2] = 1;
      out[at + 3] = T.DATA;
      out.writeUInt32BE(id, at + 5);
      out[at + 9] = byte;
      at += 10;
    }
  }
  return out;
}

/**
 * A connection that sends what it is given and notes when each stream's answer ends (a frame
 * with END_STREAM, or RST_STREAM), reading the server's frames without keeping them: the
 * innocent client runs in this process, and what this costs is not the service's.
 */
class Attacker {
  /** When each stream ended, in ms from the first send. */
  readonly endedAt = new Map<number, number>();
  private readonly socket: net.Socket;
  private pending = Buffer.alloc(0);
  private started = 0;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('error', () => undefined);
    this.socket.on('data', (chunk: Buffer) => {
      this.read(chunk);
    });
    this.socket.write(Buffer.concat([PREFACE, frame(T.SETTINGS, 0, 0)]));
  }

  send(bytes: Buffer): void {
    if (this.started === 0) this.started = performance.now();
    this.socket.write(bytes);
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (buf.length >= 9) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < 9 + length) break;
      const type = buf[3];
      const isEnd = type === T.RST_STREAM || ((buf[4] ?? 0) & 0x1) !== 0;
      const id = buf.readUInt32BE(5);
      if (isEnd && id !== 0 && !this.endedAt.has(id))
        this.endedAt.set(id, performance.now() - this.started);
      buf = buf.subarray(9 + length);
    }
    this.pending = Buffer.from(buf);
  }
}

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  return ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory', ...env } });
}

/** The innocent client's calls until `until()`, two at a time on its own connection. */
async function innocentCalls(
  session: http2.ClientHttp2Session,
  until: () => boolean,
): Promise<RawAnswer[]> {
  const results = await grpcLoad({
    sessions: [session],
    concurrency: 2,
    request: () => BODY,
    until,
  });
  return results.map((r) => r.answer);
}

function p99(answers: readonly RawAnswer[]): number {
  const latencies = new Latencies();
  for (const a of answers) latencies.add(a.ms);
  return latencies.p(99);
}

function okShare(answers: readonly RawAnswer[]): number {
  return answers.filter((a) => a.grpcStatus === 0).length / Math.max(1, answers.length);
}

/** RSS falls back to `bound` MiB within `ms` (polled); the last value seen. */
async function rssSettles(pid: number, bound: number, ms: number): Promise<number> {
  let last = rssMb(pid);
  await eventually(
    () => {
      last = rssMb(pid);
      expect(last).toBeLessThanOrEqual(bound);
    },
    { timeoutMs: ms, intervalMs: 250, what: `RSS at most ${String(round(bound))} MiB` },
  ).catch(() => undefined);
  return last;
}

/** What every test asserts of the innocent client and RSS. */
interface Outcome {
  readonly before: readonly RawAnswer[];
  readonly during: readonly RawAnswer[];
  readonly rssBefore: number;
  readonly rssPeak: number;
  readonly rssAfter: number;
}

function expectInnocentKept(outcome: Outcome): void {
  const limit = Math.max(3 * p99(outcome.before), 25);
  expect(outcome.during.length).toBeGreaterThan(50);
  expect(okShare(outcome.during)).toBeGreaterThanOrEqual(0.995);
  expect(p99(outcome.during)).toBeLessThanOrEqual(limit);
  expect(outcome.rssAfter).toBeLessThanOrEqual(outcome.rssBefore * 1.1 + 16);
}

function figures(outcome: Outcome): Record<string, string | number> {
  return {
    'innocent p99 before / during (ms)': `${String(round(p99(outcome.before)))} / ${String(round(p99(outcome.during)))}`,
    'innocent OK during': `${String(outcome.during.filter((a) => a.grpcStatus === 0).length)}/${String(outcome.during.length)}`,
    'RSS before / peak / after (MiB)': `${String(round(outcome.rssBefore))} / ${String(round(outcome.rssPeak))} / ${String(round(outcome.rssAfter))}`,
  };
}

/** Warms the service and the innocent client up, then measures the innocent client alone. */
async function baseline(
  session: http2.ClientHttp2Session,
  pid: number,
): Promise<{ before: RawAnswer[]; rssBefore: number }> {
  await innocentCalls(session, afterMs(1000));
  const before = await innocentCalls(session, afterMs(2000));
  return { before, rssBefore: rssMb(pid) };
}

describe('a report left unfinished', () => {
  it('4 RLQS streams each 256 KiB in one-byte DATA frames, the last byte never sent: ended at MESSAGE_TIMEOUT, the innocent client kept', async () => {
    const MESSAGE_TIMEOUT_MS = 2000;
    const FIRST_TIMEOUT_MS = 2000;
    const service = await start({
      MESSAGE_TIMEOUT: `${String(MESSAGE_TIMEOUT_MS)}ms`,
      RLQS_FIRST_MESSAGE_TIMEOUT: `${String(FIRST_TIMEOUT_MS)}ms`,
    });
    let session: http2.ClientHttp2Session | undefined;
    const attacker = new Attacker(service.ports.grpc);
    try {
      const pid = service.pid ?? 0;
      session = await connect(service.ports.grpc);
      const { before, rssBefore } = await baseline(session, pid);
      // Each stream sends a whole report first, as Envoy does, then the unfinished one; a
      // fifth stream opens and sends nothing.
      const ids = [1, 3, 5, 7];
      const silent = 9;
      const message = Buffer.alloc(5 + 256 * 1024);
      message.writeUInt32BE(256 * 1024, 1);
      const attack = Buffer.concat([
        ...ids.flatMap((id) => [
          frame(T.HEADERS, END_HEADERS, id, OPEN_RLQS),
          frame(T.DATA, 0, id, reports(id, 1)),
        ]),
        frame(T.HEADERS, END_HEADERS, silent, OPEN_RLQS),
        oneByteFrames(ids, message.subarray(0, message.length - 1)),
      ]);
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, rssMb(pid));
      }, 100);
      const started = performance.now();
      const cpuBefore = cpuSeconds(pid);
      const { endedAt } = attacker;
      let during: RawAnswer[] = [];
      try {
        attacker.send(attack);
        during = await innocentCalls(
          session,
          () => endedAt.size === ids.length + 1 || performance.now() - started > 15_000,
        );
      } finally {
        clearInterval(sampler);
      }
      const cpuDuring = cpuSeconds(pid) - cpuBefore;
      const rssBound = rssBefore * 1.1 + 16;
      const rssAfter = await rssSettles(pid, rssBound, 30_000);
      const outcome = { before, during, rssBefore, rssPeak, rssAfter };
      const slowest = Math.max(...endedAt.values());
      report({
        test: 'h2 streams: 4 RLQS reports of 256 KiB in one-byte frames, never finished',
        tried: `4 RLQS streams on one connection, each a whole report then 256 KiB of a report in one-byte DATA frames without its last byte, and a fifth stream that sends nothing; MESSAGE_TIMEOUT and RLQS_FIRST_MESSAGE_TIMEOUT ${String(MESSAGE_TIMEOUT_MS)} ms; innocent ShouldRateLimit calls on their own connection`,
        held: 'every hostile stream ended within its deadline; innocent calls OK, p99 within max(3x before, 25 ms); RSS back',
        figures: {
          ...figures(outcome),
          'last hostile stream ended at (ms)': round(slowest),
          'service CPU during the attack (s)': round(cpuDuring, 2),
        },
      });
      expect([...endedAt.keys()].sort((a, b) => a - b)).toEqual([...ids, silent]);
      expect(slowest).toBeLessThanOrEqual(Math.max(MESSAGE_TIMEOUT_MS, FIRST_TIMEOUT_MS) + 1500);
      expect(await service.stat('ratelimit.server.refused.message_deadline')).toBe(ids.length);
      expect(await service.stat('ratelimit.server.refused.first_message_deadline')).toBe(1);
      expectInnocentKept(outcome);
    } finally {
      attacker.destroy();
      session?.destroy();
      await service.stop();
    }
  });
});

/**
 * A client that opens its windows as far as HTTP/2 allows, opens `streams` RLQS streams each
 * watching the same `buckets` buckets, then reports one of them on each stream every `everyMs`
 * with a demand that moves: each such bucket's shares are dealt out again and every watcher of
 * it sent its new one, a hundred assignments for a report of one usage; and
 * never reads its socket (unless `isReading`: then it reads and drops what it is sent).
 */
class NonReader {
  private readonly socket: net.Socket;
  private readonly timer: NodeJS.Timeout;
  private isClosed = false;
  private round = 0;

  constructor(port: number, streams: number, buckets: number, everyMs: number, isReading = false) {
    const ids = Array.from({ length: streams }, (_, i) => 2 * i + 1);
    const reportsOf = new Map(ids.map((id) => [id, reports(id, buckets, 0, true)]));
    // A few rounds of reports made once: encoding them in the rounds would take this process's
    // time from the innocent client measured in it.
    const rounds = [1, 2, 3, 4].map((r) =>
      Buffer.concat(
        ids.map((id) =>
          frame(
            T.DATA,
            0,
            id,
            reports(id, 1, 1 + ((id * 7 + r * 13) % 50), true, (id + r) % buckets),
          ),
        ),
      ),
    );
    this.socket = net.connect(port, '127.0.0.1');
    if (isReading) this.socket.on('data', () => undefined);
    else this.socket.pause();
    this.socket.on('error', () => undefined);
    this.socket.once('close', () => {
      this.isClosed = true;
    });
    this.socket.write(
      Buffer.concat([
        PREFACE,
        frame(T.SETTINGS, 0, 0, settings([0x4, 0x7fffffff])),
        frame(T.WINDOW_UPDATE, 0, 0, Buffer.from([0x7f, 0xff, 0x00, 0x00])),
        ...ids.flatMap((id) => [
          frame(T.HEADERS, END_HEADERS, id, OPEN_RLQS),
          frame(T.DATA, 0, id, reportsOf.get(id) ?? Buffer.alloc(0)),
        ]),
      ]),
    );
    this.timer = setInterval(() => {
      if (this.isClosed || this.socket.writableLength > 0) return;
      this.round += 1;
      this.socket.write(rounds[this.round % rounds.length] ?? Buffer.alloc(0));
    }, everyMs);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  destroy(): void {
    clearInterval(this.timer);
    this.socket.destroy();
  }
}

describe('a client that never reads', () => {
  it('100 RLQS streams x 100 buckets, windows open, socket never read: held to its unsent bound, cut at GRPC_UNSENT_TIMEOUT, the innocent client kept', async () => {
    const UNSENT_TIMEOUT_MS = 2000;
    const probe = new HeapProbe();
    const service = await start({
      GRPC_MAX_UNSENT_BYTES_PER_CONNECTION: String(1024 * 1024),
      GRPC_UNSENT_TIMEOUT: `${String(UNSENT_TIMEOUT_MS)}ms`,
      RLQS_TICK: '100ms',
      RLQS_SHARE_TTL: '1s',
      ...probe.env,
    });
    let session: http2.ClientHttp2Session | undefined;
    let attacker: NonReader | undefined;
    try {
      const pid = service.pid ?? 0;
      session = await connect(service.ports.grpc);
      // The same streams and reports from a client that reads, first: what the reports cost
      // the process (its young generation grown to their rate) is in the figure before, and
      // what is compared is what not reading adds.
      const reader = new NonReader(service.ports.grpc, 100, 100, 200, true);
      await new Promise((resolve) => setTimeout(resolve, 4000));
      reader.destroy();
      const { before } = await baseline(session, pid);
      // RSS is read after a full collection (the preload's, h2-flood-heap.cjs), here and after
      // the attack. The reports fill the
      // old generation with garbage, and an idle process keeps it: V8's memory reducer waits
      // 30 s from the start of the process, then reads the allocation rate of the last
      // collections, stale while idle, as high, and runs none (--trace-memory-reducer: "high
      // alloc" every 8 s for a minute). Uncollected, RSS 30 s after was 25 to 38 MiB over
      // before, with no more of it reachable. Collected both times, the figures compare what
      // the process holds.
      const rssBefore = (await probe.collected(pid)).rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => {
        rssPeak = Math.max(rssPeak, rssMb(pid));
      }, 100);
      // Counted from here: the reading client of the baseline is not this test's attacker.
      const slowReadersBefore = await service.stat('ratelimit.server.refused.slow_reader');
      const started = performance.now();
      let cutAt = -1;
      let during: RawAnswer[] = [];
      const ATTACK_MS = 20_000;
      try {
        attacker = new NonReader(service.ports.grpc, 100, 100, 200);
        const calls = innocentCalls(session, () => {
          const isOver = cutAt >= 0 || performance.now() - started > ATTACK_MS;
          return isOver;
        });
        await eventually(
          async () => {
            expect(await service.stat('ratelimit.server.refused.slow_reader')).toBe(
              slowReadersBefore + 1,
            );
          },
          { timeoutMs: ATTACK_MS, intervalMs: 100, what: 'the client that never reads cut' },
        ).catch(() => undefined);
        const slowReaders = await service.stat('ratelimit.server.refused.slow_reader');
        if (slowReaders === slowReadersBefore + 1) cutAt = performance.now() - started;
        during = await calls;
      } finally {
        clearInterval(sampler);
        attacker?.destroy();
      }
      const rssUncollected = rssMb(pid);
      const rssAfter = (await probe.collected(pid)).rss;
      const outcome = { before, during, rssBefore, rssPeak, rssAfter };
      report({
        test: 'h2 streams: a client that never reads, 100 RLQS streams x 100 buckets',
        tried: `one connection with windows opened to 2^31-1, 100 RLQS streams watching 100 buckets each, reporting every 200 ms, its socket never read; GRPC_MAX_UNSENT_BYTES_PER_CONNECTION 1 MiB, GRPC_UNSENT_TIMEOUT ${String(UNSENT_TIMEOUT_MS)} ms; innocent ShouldRateLimit calls on their own connection`,
        held: 'the connection cut within the bound; innocent calls OK, p99 within max(3x before, 25 ms); RSS back',
        figures: {
          ...figures(outcome),
          'RSS after, before the collection (MiB)': round(rssUncollected),
          'cut at (ms)': round(cutAt),
        },
      });
      // The socket's buffers (the kernel's, both ends) take some MiB before anything waits in
      // the process; the bound then runs for GRPC_UNSENT_TIMEOUT.
      expect(cutAt).toBeGreaterThanOrEqual(0);
      expect(cutAt).toBeLessThanOrEqual(UNSENT_TIMEOUT_MS + 8000);
      expectInnocentKept(outcome);
    } finally {
      attacker?.destroy();
      session?.destroy();
      await service.stop();
      probe.dispose();
    }
  });
});
