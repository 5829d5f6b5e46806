// Rig, HTTP/2 floods: each flood an attacker can send on the gRPC port, run while an innocent
// client calls on its own connection. The process survives, the attacker is cut or held at
// bounded cost, the innocent client keeps every call with its p99 near its unloaded p99, and
// RSS comes back once the attacker leaves. Each flood is one row of docs/reliability.md.
import net from 'node:net';
import { collectCleanups } from '../helpers/cleanups';
import { connect, RLS_PATH } from '../helpers/h2-raw';
import { request } from '../helpers/h2-frames';
import {
  ackFlood,
  blockedStreams,
  continuationFlood,
  initialWindowFlood,
  largeSettings,
  opening,
  oversizedBlocks,
  unfinishedBodies,
  windowUpdateFlood,
} from '../helpers/h2-floods';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { afterMs, byMode, grpcLoad, grpcRequest, Latencies, report, round, rssMb } from './rig';

jest.setTimeout(byMode(60_000, 600_000));

const runtime = runtimeDirForFile({
  'f.yaml':
    'domain: f\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n',
});
const cleanup = collectCleanups();
const PHASE_MS = byMode(800, 8000);
const CALL = request(RLS_PATH, [
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);
const BODY = grpcRequest('f', [{ entries: [['k', 'v']] }]);

let service: ServiceProcess;
beforeAll(async () => {
  service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  cleanup(() => service.stop());
});

/** Innocent calls on their own connection for `ms`: p99 and the share answered OK. */
async function innocent(ms: number): Promise<{ p99: number; ok: number; calls: number }> {
  const session = await connect(service.ports.grpc);
  try {
    const latencies = new Latencies();
    let ok = 0;
    const results = await grpcLoad({
      sessions: [session],
      concurrency: 4,
      request: () => BODY,
      until: afterMs(ms),
      onResult: ({ answer }) => {
        latencies.add(answer.ms);
        if (answer.grpcStatus === 0) ok += 1;
      },
    });
    return { p99: latencies.p(99), ok, calls: results.length };
  } finally {
    session.destroy();
  }
}

/**
 * Attack connections, `width` at a time, each sent `bytes` (again and again while it stays
 * open, unless `once`); a cut connection is replaced until `until`. `isReading` false: the
 * attacker never reads what the server sends.
 */
function attack(
  bytes: () => Buffer,
  options: {
    width: number;
    until: () => boolean;
    once: boolean | undefined;
    isReading: boolean | undefined;
  },
): { cuts: () => number; stop: () => void } {
  let cuts = 0;
  let isStopped = false;
  const sockets = new Set<net.Socket>();
  const open = (): void => {
    if (isStopped || options.until()) return;
    const socket = net.connect(service.ports.grpc, '127.0.0.1');
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (options.isReading === false) socket.pause();
    else socket.resume();
    const send = (): void => {
      if (socket.destroyed || isStopped || options.until()) return;
      const flushed = socket.write(bytes());
      if (options.once !== true) {
        if (flushed) setImmediate(send);
        else socket.once('drain', send);
      }
    };
    socket.write(opening());
    send();
    socket.once('close', () => {
      sockets.delete(socket);
      cuts += 1;
      setTimeout(open, 10);
    });
  };
  for (let i = 0; i < options.width; i++) open();
  return {
    cuts: () => cuts,
    stop: () => {
      isStopped = true;
      for (const socket of sockets) socket.destroy();
    },
  };
}

interface Flood {
  readonly name: string;
  readonly width: number;
  readonly once?: boolean;
  readonly isReading?: boolean;
  readonly bytes: () => Buffer;
}

const FLOODS: readonly Flood[] = [
  {
    name: 'WINDOW_UPDATE(0,+1) flood, 1,000 streams blocked on a zero window',
    width: 1,
    bytes: (() => {
      let isFirst = true;
      return () => {
        if (!isFirst) return windowUpdateFlood(5000);
        isFirst = false;
        return blockedStreams(1000, CALL, BODY);
      };
    })(),
  },
  {
    name: 'SETTINGS moving INITIAL_WINDOW_SIZE, 1,000 blocked streams',
    width: 1,
    bytes: (() => {
      let sent = 0;
      return () => (sent++ % 2 === 0 ? blockedStreams(1000, CALL, BODY) : initialWindowFlood(500));
    })(),
  },
  { name: 'SETTINGS of 2,730 entries', width: 1, bytes: () => largeSettings(2730) },
  {
    name: 'PING flood, never read',
    width: 1,
    isReading: false,
    bytes: () => ackFlood('ping', 4000),
  },
  {
    name: 'SETTINGS flood, never read',
    width: 1,
    isReading: false,
    bytes: () => ackFlood('settings', 4000),
  },
  {
    name: 'header blocks past the list limit (100 KB literal)',
    width: 1,
    once: true,
    bytes: () => oversizedBlocks('literal', 10, 100_000),
  },
  {
    name: 'HPACK bomb (120,000 references to a 4 KB entry)',
    width: 1,
    once: true,
    bytes: () => oversizedBlocks('bomb', 10, 120_000),
  },
  {
    name: '20 connections, unfinished blocks of 130,000 one-byte CONTINUATION frames',
    width: 20,
    once: true,
    bytes: () => continuationFlood(130_000),
  },
  {
    name: '50 connections, 4 unfinished 1 MiB bodies each',
    width: 50,
    once: true,
    bytes: () => unfinishedBodies(4, 1024 * 1024, CALL),
  },
];

it.each(FLOODS.map((flood) => [flood.name, flood] as const))('%s', async (name, flood) => {
  const pid = service.pid ?? 0;
  const before = await innocent(PHASE_MS);
  const rssBefore = rssMb(pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  const until = afterMs(PHASE_MS);
  const attacker = attack(flood.bytes, {
    width: flood.width,
    until,
    once: flood.once,
    isReading: flood.isReading,
  });
  let during;
  try {
    during = await innocent(PHASE_MS);
  } finally {
    attacker.stop();
    clearInterval(sampler);
  }
  await new Promise((resolve) => setTimeout(resolve, byMode(500, 3000)));
  const rssAfter = rssMb(pid);
  report({
    test: `h2 flood: ${name}`,
    tried: `${name}, from ${String(flood.width)} connection(s), reconnecting when cut, for ${String(PHASE_MS)} ms, while an innocent client called on its own connection`,
    held: 'process up; every innocent call OK; attacker cut or bounded',
    figures: {
      'innocent p99 ms before / during': `${String(round(before.p99))} / ${String(round(during.p99))}`,
      'innocent OK during': `${String(during.ok)}/${String(during.calls)}`,
      'attacking connections cut': attacker.cuts(),
      'RSS MiB before / peak / after': `${String(round(rssBefore))} / ${String(round(peak))} / ${String(round(rssAfter))}`,
    },
  });
  // Still serving: the innocent client's calls came back OK.
  expect(await fetch(service.url('/healthcheck')).then((res) => res.status)).toBe(200);
  expect(during.ok).toBe(during.calls);
  if (byMode(false, true)) {
    expect(during.p99).toBeLessThanOrEqual(3 * before.p99);
    expect(rssAfter).toBeLessThanOrEqual(1.1 * rssBefore);
  }
});
