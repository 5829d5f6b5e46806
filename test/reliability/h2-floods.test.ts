// Rig, HTTP/2 floods: each flood an attacker can send on the gRPC port, run while an innocent
// client calls on its own connection, against the own HTTP/2 and (long mode) against
// node:http2 (GRPC_HTTP2=node) under the same conditions. The process survives, the attacker
// is cut or held at bounded cost, the innocent client keeps every call with its p99 near its
// unloaded p99, and RSS comes back once the attacker leaves. Each flood is one row of
// docs/reliability.md.
//
// To be fair on a small shared machine, the service runs alone on the first CPU and the
// attacker and innocent client each in a process of their own on the others (the attacker
// niced, so the innocent client is served first when it wakes); baseline and flood windows
// alternate, and the medians of several rounds are reported. A preload (h2-flood-heap.cjs)
// reports the service's V8 heap and Buffers, to tell what live objects hold from what the heap
// or the allocator keeps once they are gone.
import { request } from '../helpers/h2-frames';
import { opening, rigFloods, type Flood } from '../helpers/h2-floods';
import {
  Attacker,
  cpuSeconds,
  cpuSets,
  Innocent,
  median,
  pin,
  type AttackSummary,
  type InnocentWindow,
} from '../helpers/h2-flood-rig';
import { RLS_PATH } from '../helpers/h2-raw';
import { HeapProbe, type Heap } from '../helpers/heap-probe';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { byMode, grpcRequest, IS_LONG, report, round, rssMb } from './rig';

jest.setTimeout(byMode(60_000, 600_000));

const runtime = runtimeDirForFile({
  'f.yaml':
    'domain: f\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 1000000000 }\n',
});
const CALL = request(RLS_PATH, [
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]);
const BODY = grpcRequest('f', [{ entries: [['k', 'v']] }]);
/** Baseline and flood windows, and how many of each alternate. */
const WINDOW_MS = byMode(400, 3000);
const ROUNDS = byMode(1, 3);
/** Innocent calls a second, on a fixed schedule (env H2_FLOOD_RATE; 0: four back to back). */
const RATE = Number(process.env.H2_FLOOD_RATE ?? 2000);
/** How long RSS may take to come back once the attacker has left. */
const SETTLE_MS = byMode(0, 15_000);
const MODES = byMode(['own'], (process.env.H2_FLOOD_MODES ?? 'own,node').split(','));
const CPUS = cpuSets();
const FLOODS = rigFloods(CALL, BODY);

/** What one flood did to one service. */
interface Outcome {
  readonly before: InnocentWindow[];
  readonly during: InnocentWindow[];
  readonly attacks: AttackSummary[];
  /** The service's CPU seconds per second in each flood window. */
  readonly cpu: number[];
  readonly rss: { before: number; peak: number; after: number; afterMs: number };
  /** `collected`: long mode only. */
  readonly heap: { before: Heap; peak: Heap; after: Heap; collected?: Heap };
}

const probe = new HeapProbe();
afterAll(() => {
  probe.dispose();
});

function higher(a: Heap, b: Heap): Heap {
  return {
    rss: Math.max(a.rss, b.rss),
    heapUsed: Math.max(a.heapUsed, b.heapUsed),
    heapTotal: Math.max(a.heapTotal, b.heapTotal),
    external: Math.max(a.external, b.external),
  };
}

async function startService(mode: string): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      GRPC_HTTP2: mode,
      ...probe.env,
      // Measured as deployed: without the test suites' overwriting of each read.
      H2_POISON_READS: '0',
    },
  });
  pin(service.pid ?? 0, CPUS.service);
  return service;
}

/** Waits up to SETTLE_MS for RSS to come within 10% of `before`, calls going on meanwhile. */
async function settle(
  pid: number,
  innocent: Innocent,
  before: number,
): Promise<{ after: number; afterMs: number }> {
  const started = performance.now();
  let after = rssMb(pid);
  while (after > 1.1 * before && performance.now() - started < SETTLE_MS) {
    await innocent.measure(RATE, 500);
    after = rssMb(pid);
  }
  return { after, afterMs: performance.now() - started };
}

async function run(flood: Flood, service: ServiceProcess, innocent: Innocent): Promise<Outcome> {
  const pid = service.pid ?? 0;
  // A warm-up, in long mode: the first calls on a new service are slower.
  if (IS_LONG) await innocent.measure(RATE, WINDOW_MS);
  const rssBefore = rssMb(pid);
  const heapBefore = probe.latest();
  let peak = rssBefore;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
    heapPeak = higher(heapPeak, probe.latest());
  }, 100);
  const before: InnocentWindow[] = [];
  const during: InnocentWindow[] = [];
  const attacks: AttackSummary[] = [];
  const cpu: number[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      before.push(await innocent.measure(RATE, WINDOW_MS));
      const cpuStart = cpuSeconds(pid);
      const started = performance.now();
      const attacker = Attacker.start(
        service.ports.grpc,
        { ...flood, opening: Buffer.concat([opening(), flood.opening ?? Buffer.alloc(0)]) },
        CPUS.clients,
      );
      try {
        during.push(await innocent.measure(RATE, WINDOW_MS));
      } finally {
        attacks.push(await attacker.stop());
      }
      cpu.push((cpuSeconds(pid) - cpuStart) / ((performance.now() - started) / 1000));
    }
  } finally {
    clearInterval(sampler);
  }
  const settled = await settle(pid, innocent, rssBefore);
  // The preload writes every 200 ms: what it wrote after the settling.
  await innocent.measure(RATE, 300);
  return {
    before,
    during,
    attacks,
    cpu,
    rss: { before: rssBefore, peak, ...settled },
    heap: {
      before: heapBefore,
      peak: heapPeak,
      after: probe.latest(),
      ...(IS_LONG ? { collected: await probe.collected(pid) } : {}),
    },
  };
}

/** RSS, V8 heap used and total, and memory outside the heap (Buffers), in MiB. */
function shownHeap(h: Heap): string {
  return [h.rss, h.heapUsed, h.heapTotal, h.external].map((v) => String(round(v))).join(' / ');
}

function figures(outcome: Outcome): Record<string, string | number> {
  const { before, during, attacks, cpu, rss, heap: memory } = outcome;
  const p99Before = median(before.map((w) => w.p99));
  const p99During = median(during.map((w) => w.p99));
  const list = (values: readonly number[]): string => values.map((v) => String(round(v))).join(' ');
  return {
    'innocent p99 ms before / during (median)': `${String(round(p99Before))} / ${String(round(p99During))}`,
    ratio: round(p99During / p99Before, 2),
    'p99 ms per round before': list(before.map((w) => w.p99)),
    'p99 ms per round during': list(during.map((w) => w.p99)),
    "the innocent client's own longest event-loop delay ms per round before / during": `${list(
      before.map((w) => w.ownDelayMaxMs),
    )} / ${list(during.map((w) => w.ownDelayMaxMs))}`,
    'innocent OK during': `${String(during.reduce((a, w) => a + w.ok, 0))}/${String(during.reduce((a, w) => a + w.calls, 0))}`,
    'attacking connections opened / cut': `${String(attacks.reduce((a, s) => a + s.opened, 0))} / ${String(attacks.reduce((a, s) => a + s.cut, 0))}`,
    'attack MB written': round(attacks.reduce((a, s) => a + s.written, 0) / 1e6),
    'service CPU during (median)': `${String(Math.round(100 * median(cpu)))}%`,
    'RSS MiB before / peak / after': `${String(round(rss.before))} / ${String(round(rss.peak))} / ${String(round(rss.after))}`,
    'RSS back after ms': Math.round(rss.afterMs),
    'MiB rss / heap used / heap total / external, before': shownHeap(memory.before),
    'MiB rss / heap used / heap total / external, peak': shownHeap(memory.peak),
    'MiB rss / heap used / heap total / external, after': shownHeap(memory.after),
    ...(memory.collected === undefined
      ? {}
      : {
          'MiB rss / heap used / heap total / external, after a collection': shownHeap(
            memory.collected,
          ),
        }),
  };
}

describe.each(FLOODS.map((flood) => [flood.name, flood] as const))('%s', (name, flood) => {
  it.each(MODES)(`on %s HTTP/2`, async (mode) => {
    const service = await startService(mode);
    let innocent: Innocent | undefined;
    try {
      innocent = await Innocent.start(service.ports.grpc, BODY, CPUS.clients);
      const outcome = await run(flood, service, innocent);
      const shown = figures(outcome);
      report({
        test: `h2 flood (${mode}): ${name}`,
        tried: `${name}, from ${String(flood.width)} connection(s), reconnecting when cut, ${String(ROUNDS)} rounds of ${String(WINDOW_MS)} ms without and with it, innocent calls at ${RATE > 0 ? `${String(RATE)}/s` : '4 at a time'} on their own connection`,
        held: 'process up; every innocent call OK; attacker cut or bounded',
        figures: shown,
      });
      console.log(`${mode}: ${name}\n${JSON.stringify(shown, null, 1)}`);
      expect(await fetch(service.url('/healthcheck')).then((res) => res.status)).toBe(200);
      for (const window of outcome.during) expect(window.ok).toBe(window.calls);
    } finally {
      await innocent?.stop();
      await service.stop();
    }
  });
});
