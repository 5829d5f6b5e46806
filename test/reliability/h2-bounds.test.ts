// Rig, HTTP/2 bounds in count as well as bytes: unfinished requests held by many connections, or
// by a few that take all they may, cost the service a bounded number of memory mappings and
// none of an innocent client's calls, against the built service.
//
// Refusals are RST_STREAM REFUSED_STREAM, as the gRPC peers use and read it. C-core's server
// refuses a stream it has no room for so (src/core/ext/transport/chttp2/transport/parsing.cc,
// init_header_frame_parser: past max_concurrent_streams, and under max_concurrent_streams
// overload protection). grpc-js's client marks a call ended by RST_STREAM REFUSED_STREAM as
// never processed (src/load-balancing-call.ts, onReceiveStatus: progress 'REFUSED') and sends
// it again once, transparently, with or without a retry policy (src/retrying-call.ts,
// handleChildStatus, case 'REFUSED'); it maps the code to UNAVAILABLE (src/subchannel-call.ts).
// RESOURCE_EXHAUSTED is a processed call's status, retried only by a policy that names it.
import type http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { block, END_HEADERS, frame, RawClient, request, T } from '../helpers/h2-frames';
import { connect, rawCall, RLS_PATH, type RawAnswer } from '../helpers/h2-raw';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { byMode, grpcLoad, grpcRequest, report } from './rig';

jest.setTimeout(byMode(90_000, 300_000));

const REFUSED_STREAM = 0x7;
const runtime = runtimeDirForFile({
  'b.yaml':
    'domain: b\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n',
});
const CALL = request(RLS_PATH, [
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);
/** A GET, which the router answers 405 once its body has ended. */
const NOT_A_CALL = block([
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', RLS_PATH],
  [':authority', 'localhost'],
]);
const BODY = grpcRequest('b', [{ entries: [['k', 'v']] }]);
/** A body past a pooled Buffer (4 KiB), so that holding it takes a mapped store. */
const LARGE_BODY = grpcRequest('b', [{ entries: [['k', 'v'.repeat(6000)]] }]);

/** Memory mappings of a process (lines of /proc/PID/maps). */
function mappings(pid: number): number {
  return readFileSync(`/proc/${String(pid)}/maps`, 'utf8').split('\n').length - 1;
}

/** `count` calls whose bodies arrive as `frames` one-byte DATA frames each and never end. */
function oneByteBodies(count: number, frames: number, firstId = 1): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const id = firstId + 2 * i;
    out.push(frame(T.HEADERS, END_HEADERS, id, CALL));
    for (let f = 0; f < frames; f++) out.push(frame(T.DATA, 0, id, Buffer.from([0])));
  }
  return Buffer.concat(out);
}

/** `count` requests with `header`, each sending `bytes` of a body that never ends. */
function unfinishedBodies(header: Buffer, count: number, bytes: number, firstId: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const id = firstId + 2 * i;
    out.push(frame(T.HEADERS, END_HEADERS, id, header), frame(T.DATA, 0, id, Buffer.alloc(bytes)));
  }
  return Buffer.concat(out);
}

/** RST_STREAM REFUSED_STREAM frames a raw client was sent. */
function refusals(client: RawClient): number {
  return client.frames.filter(
    (f) => f.type === T.RST_STREAM && f.payload.readUInt32BE(0) === REFUSED_STREAM,
  ).length;
}

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  return ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory', ...env } });
}

describe('unfinished requests bounded in count', () => {
  it('50 connections of 1,000 bodies in one-byte frames: up, few mappings, innocent calls all OK', async () => {
    const HEADER_TIMEOUT_MS = 3000;
    const service = await start({ HEADER_TIMEOUT: `${String(HEADER_TIMEOUT_MS)}ms` });
    const attackers: RawClient[] = [];
    let session: http2.ClientHttp2Session | undefined;
    try {
      const pid = service.pid ?? 0;
      // Another peer than the attackers (127.0.0.1). One address is one peer: a client sharing
      // the attackers' is read in turn with them (h2/turns.ts), and a request of it split by a
      // read counts against their share of GRPC_MAX_BUFFERED_REQUESTS (refused REFUSED_STREAM,
      // which gRPC clients retry; 5 of some thousand calls in 2 of 4 runs).
      session = await connect(service.ports.grpc, '127.0.0.2');
      for (let i = 0; i < 20; i++) expect((await rawCall(session, BODY)).grpcStatus).toBe(0);
      const before = mappings(pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, mappings(pid));
      }, 50);
      const started = performance.now();
      let innocent: RawAnswer[] = [];
      try {
        const load = grpcLoad({
          sessions: [session],
          concurrency: 4,
          request: () => BODY,
          until: () => performance.now() - started > HEADER_TIMEOUT_MS + 1000,
        });
        for (let i = 0; i < 50; i++) {
          const attacker = new RawClient(service.ports.grpc);
          attackers.push(attacker);
          attacker.send(oneByteBodies(1000, 2));
        }
        await Promise.all(attackers.map((a) => a.roundTrip()));
        innocent = (await load).map((r) => r.answer);
      } finally {
        clearInterval(sampler);
      }
      const refused = attackers.reduce((n, a) => n + refusals(a), 0);
      report({
        test: 'h2 bounds: 50 connections x 1,000 unfinished bodies in one-byte frames',
        tried: `50 connections, 1,000 calls each with a body of two one-byte DATA frames, held for HEADER_TIMEOUT (${String(HEADER_TIMEOUT_MS)} ms), innocent calls on their own connection`,
        held: 'process up; mappings bounded; every innocent call OK',
        figures: {
          'mappings before / peak': `${String(before)} / ${String(peak)}`,
          'streams refused': refused,
          'innocent OK': `${String(innocent.filter((a) => a.grpcStatus === 0).length)}/${String(innocent.length)}`,
        },
      });
      // Each connection holds at most 312 of GRPC_MAX_BUFFERED_REQUESTS (10,000), all at most
      // 10,000: the rest of the 50,000 are refused.
      expect(refused).toBeGreaterThanOrEqual(50_000 - 10_000);
      // Bodies this small are held in pooled Buffers: no mapping of their own (before, each
      // took one or two, and 50,000 of them ran the process into vm.max_map_count).
      expect(peak - before).toBeLessThan(1000);
      expect(innocent.length).toBeGreaterThan(20);
      expect(innocent.filter((a) => a.grpcStatus !== 0)).toEqual([]);
      expect(await fetch(service.url('/healthcheck')).then((res) => res.status)).toBe(200);
    } finally {
      for (const attacker of attackers) attacker.destroy();
      session?.destroy();
      await service.stop();
    }
  });
});

/** A header field of `bytes` bytes as an HPACK literal without indexing (a new name). */
function largeField(name: string, bytes: number): Buffer {
  const length = [0x7f];
  let rest = bytes - 127;
  while (rest >= 0x80) {
    length.push((rest % 0x80) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  length.push(rest);
  return Buffer.concat([
    Buffer.from([0x00, name.length]),
    Buffer.from(name, 'latin1'),
    Buffer.from(length),
    Buffer.alloc(bytes, 0x61),
  ]);
}

/** A header block left unfinished: HEADERS and seven CONTINUATION frames of 1 KB, no end. */
function unfinishedBlock(id: number): Buffer {
  const block = Buffer.concat([CALL, largeField('x-pad', 8000)]);
  const out = [frame(T.HEADERS, 0, id, block.subarray(0, 1000))];
  for (let at = 1000; at < 8000; at += 1000)
    out.push(frame(T.CONTINUATION, 0, id, block.subarray(at, at + 1000)));
  return Buffer.concat(out);
}

/** A call whose headers come as HEADERS and CONTINUATION and whose body in three DATA frames. */
async function splitCall(session: http2.ClientHttp2Session, body: Buffer): Promise<string> {
  const stream = session.request({
    ':method': 'POST',
    ':path': RLS_PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
    // Past the 16 KiB frame: the client splits the block into HEADERS and CONTINUATION.
    'x-pad': 'p'.repeat(24_000),
  });
  let status = 'none';
  stream.on('response', (headers) => {
    status = String(headers['grpc-status'] ?? status);
  });
  stream.on('trailers', (trailers) => {
    status = String(trailers['grpc-status']);
  });
  stream.on('error', () => undefined);
  stream.resume();
  const closed = new Promise<void>((resolve) => stream.once('close', resolve));
  const third = Math.ceil(body.length / 3);
  for (let at = 0; at < body.length; at += third) {
    stream.write(body.subarray(at, at + third));
    // A PING answered: the piece went out as a DATA frame of its own.
    await new Promise<void>((resolve) =>
      session.ping(() => {
        resolve();
      }),
    );
  }
  stream.end();
  await closed;
  return status;
}

describe('one budget: a few connections cannot take what the others need', () => {
  it.each(['own', 'node'])(
    'four hostile connections fill what they may; innocent split calls all OK, never GOAWAY (%s HTTP/2)',
    async (http2Stack) => {
      const service = await start({
        GRPC_HTTP2: http2Stack,
        HEADER_TIMEOUT: '8s',
        // The least budget, so that four connections would have filled it at a quarter each.
        GRPC_MAX_BUFFERED_BYTES: String(1024 * 1024),
        GRPC_MAX_BUFFERED_REQUESTS: '320',
        MAX_REQUEST_BYTES: String(16 * 1024),
      });
      const hostile: RawClient[] = [];
      let session: http2.ClientHttp2Session | undefined;
      try {
        for (let i = 0; i < 4; i++) {
          const client = new RawClient(service.ports.grpc);
          hostile.push(client);
          // Calls with unfinished bodies, refused requests (405) with bodies nobody keeps, and
          // calls with bodies in one-byte frames, each far past the connection's share.
          client.send(
            unfinishedBodies(CALL, 30, 15_000, 1),
            unfinishedBodies(NOT_A_CALL, 30, 15_000, 61),
            oneByteBodies(40, 2, 121),
          );
        }
        await Promise.all(hostile.map((client) => client.roundTrip()));
        // And then a header block left unfinished on each.
        for (const client of hostile) client.send(unfinishedBlock(201));
        expect(hostile.every((client) => refusals(client) > 0)).toBe(true);
        session = await connect(service.ports.grpc);
        const goaways: number[] = [];
        session.on('goaway', (code: number) => goaways.push(code));
        const statuses: string[] = [];
        for (let i = 0; i < 30; i++) {
          statuses.push(
            ...(await Promise.all([BODY, LARGE_BODY].map((b) => splitCall(session!, b)))),
          );
        }
        report({
          test: `h2 bounds (${http2Stack}): four hostile connections, innocent split calls`,
          tried:
            'four connections holding unfinished bodies, ignored 405 bodies, one-byte-frame bodies and an unfinished header block, GRPC_MAX_BUFFERED_BYTES 1 MiB; innocent calls with 24 KB headers (HEADERS + CONTINUATION) and bodies in three DATA frames',
          held: 'every innocent call OK, no GOAWAY',
          figures: {
            'hostile streams refused': hostile.reduce((n, c) => n + refusals(c), 0),
            'innocent OK': `${String(statuses.filter((s) => s === '0').length)}/${String(statuses.length)}`,
          },
        });
        expect(statuses.filter((s) => s !== '0')).toEqual([]);
        expect(goaways).toEqual([]);
        expect(session.closed || session.destroyed).toBe(false);
        // The hostile connections were not cut for what the budget refused them either.
        expect(hostile.some((client) => client.frames.some((f) => f.type === T.GOAWAY))).toBe(
          false,
        );
      } finally {
        for (const client of hostile) client.destroy();
        session?.destroy();
        await service.stop();
      }
    },
  );
});
