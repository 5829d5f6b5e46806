// Rig, area 1: exactness under concurrency. Many clients over gRPC and HTTP at once on keys
// with known limits: the OK answers of each window equal the limit exactly, on the memory
// backend and on a real Redis, with many keys, several descriptors per request, hits_addend
// above 1 and refunds (negative hits) mixed in.
import type http2 from 'node:http2';
import { collectCleanups } from '../helpers/cleanups';
import { connect, rawCall } from '../helpers/h2-raw';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import {
  byMode,
  grpcDecision,
  grpcRequest,
  jsonDecision,
  jsonRequest,
  Latencies,
  report,
  round,
  type Decision,
  type RigDescriptor,
} from './rig';

jest.setTimeout(byMode(90_000, 900_000));

/** The limit of the single key, the per-key limit of many keys, and the load. */
const ONE_LIMIT = byMode(100, 2000);
const MANY_LIMIT = 60;
const MANY_HITS = 3;
const KEYS = byMode(10, 100);
const CLIENTS = byMode(32, 128);
const REFUND_START = 1_000_000;

const CONFIG = {
  'exact.yaml': `
domain: exact
descriptors:
  - key: one
    rate_limit: { unit: minute, requests_per_unit: ${ONE_LIMIT} }
  - key: many
    rate_limit: { unit: minute, requests_per_unit: ${MANY_LIMIT} }
  - key: refund
    rate_limit: { unit: day, requests_per_unit: ${REFUND_START * 2} }
`,
};

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();
const run = `${process.pid}_${Date.now()}`;

/** Sends one request, alternately over gRPC and HTTP, and reads the decision. */
class Clients {
  private readonly sessions: http2.ClientHttp2Session[] = [];
  private turn = 0;
  readonly latency = { grpc: new Latencies(), http: new Latencies() };

  private constructor(private readonly service: ServiceProcess) {}

  static async open(service: ServiceProcess, sessions: number): Promise<Clients> {
    const clients = new Clients(service);
    for (let i = 0; i < sessions; i++) clients.sessions.push(await connect(service.ports.grpc));
    return clients;
  }

  async send(descriptors: readonly RigDescriptor[]): Promise<Decision> {
    const turn = this.turn++;
    const started = performance.now();
    if (turn % 2 === 0) {
      const session = this.sessions[turn % this.sessions.length];
      if (session === undefined) throw new Error('no session');
      const answer = await rawCall(session, grpcRequest('exact', descriptors));
      this.latency.grpc.add(performance.now() - started);
      if (answer.grpcStatus !== 0) throw new Error(`gRPC status ${String(answer.grpcStatus)}`);
      return grpcDecision(answer.body);
    }
    const res = await fetch(this.service.url('/json'), {
      method: 'POST',
      body: jsonRequest('exact', descriptors),
    });
    const payload: unknown = await res.json();
    this.latency.http.add(performance.now() - started);
    if (res.status !== 200 && res.status !== 429) throw new Error(`HTTP ${res.status}`);
    return jsonDecision(payload);
  }

  close(): void {
    for (const session of this.sessions) session.destroy();
  }
}

/** Runs `count` requests from `clients` concurrent loops. */
async function concurrently<T>(count: number, send: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < count; i = next++) out[i] = await send(i);
    }),
  );
  return out;
}

/** The window (of `unitSeconds`) an answer counted in, from its reset time. */
function windowOf(resetSeconds: number, unitSeconds: number): number {
  return Math.round((Date.now() / 1000 + resetSeconds) / unitSeconds);
}

/** OK and total answers per window of one descriptor position. */
function perWindow(decisions: readonly Decision[], at: number, unitSeconds: number) {
  const windows = new Map<number, { ok: number; total: number }>();
  for (const d of decisions) {
    const status = d.statuses[at];
    if (status === undefined) throw new Error('a status is missing');
    const w = windowOf(status.resetSeconds, unitSeconds);
    const entry = windows.get(w) ?? { ok: 0, total: 0 };
    entry.total += 1;
    if (status.code === 'OK') entry.ok += 1;
    windows.set(w, entry);
  }
  return [...windows.values()];
}

async function startService(backend: 'memory' | 'redis'): Promise<ServiceProcess> {
  let env: Record<string, string> = { ...runtime.env(), BACKEND_TYPE: 'memory' };
  if (backend === 'redis') {
    const redis = await RedisServer.start();
    cleanup(() => redis.destroy());
    env = { ...runtime.env(), BACKEND_TYPE: 'redis', REDIS_URL: `127.0.0.1:${redis.port}` };
  }
  const service = await ServiceProcess.start({ env });
  cleanup(() => service.stop());
  return service;
}

describe.each(['memory', 'redis'] as const)('exactness on %s', (backend) => {
  let service: ServiceProcess;
  let clients: Clients;

  beforeAll(async () => {
    service = await startService(backend);
    clients = await Clients.open(service, 4);
    cleanup(() => {
      clients.close();
    });
  });

  it('one key: OK answers per window equal the limit', async () => {
    const key = `${run}_${backend}_one`;
    const total = ONE_LIMIT * 3;
    const started = performance.now();
    const decisions = await concurrently(total, () => clients.send([{ entries: [['one', key]] }]));
    const seconds = (performance.now() - started) / 1000;
    const windows = perWindow(decisions, 0, 60);
    for (const w of windows) expect(w.ok).toBe(Math.min(ONE_LIMIT, w.total));
    report({
      test: `exactness, one key, ${backend}`,
      tried: `${total} requests from ${CLIENTS} concurrent clients (half gRPC, half /json) on one key limited to ${ONE_LIMIT}/minute`,
      held: 'OK answers per window = the limit exactly',
      figures: {
        requests: total,
        ok: windows.reduce((a, w) => a + w.ok, 0),
        windows: windows.length,
        'req/s': round(total / seconds, 0),
        'gRPC p99 ms': round(clients.latency.grpc.p(99)),
        'HTTP p99 ms': round(clients.latency.http.p(99)),
      },
    });
  });

  it('many keys, several descriptors, hits_addend 3 and refunds mixed in', async () => {
    const requestsPerKey = (MANY_LIMIT / MANY_HITS) * 3;
    const total = KEYS * requestsPerKey;
    const refundKey = `${run}_${backend}_refund`;
    const refund = (hits: number, isNegativeHits: boolean): RigDescriptor => ({
      entries: [['refund', refundKey]],
      hitsAddend: hits,
      isNegativeHits,
    });
    const charged = await clients.send([refund(REFUND_START, false)]);
    const decisions = await concurrently(total, (i) =>
      clients.send([
        { entries: [['many', `${run}_${backend}_${i % KEYS}`]], hitsAddend: MANY_HITS },
        { entries: [['one', `${run}_${backend}_b${i % KEYS}`]] },
        refund(1, true),
      ]),
    );
    // Per key: split the answers by key, then by window.
    for (let k = 0; k < KEYS; k++) {
      const ofKey = decisions.filter((_, i) => i % KEYS === k);
      for (const w of perWindow(ofKey, 0, 60))
        expect(w.ok).toBe(Math.min(MANY_LIMIT / MANY_HITS, w.total));
      for (const w of perWindow(ofKey, 1, 60)) expect(w.ok).toBe(Math.min(ONE_LIMIT, w.total));
    }
    // A read (hits_addend 0) of the refunded key: every refund subtracted exactly once.
    const read = await clients.send([refund(0, false)]);
    const chargedWindow = windowOf(charged.statuses[0]?.resetSeconds ?? 0, 86_400);
    expect(windowOf(read.statuses[0]?.resetSeconds ?? 0, 86_400)).toBe(chargedWindow);
    expect(REFUND_START * 2 - (read.statuses[0]?.remaining ?? 0)).toBe(REFUND_START - total);
    report({
      test: `exactness, many keys, ${backend}`,
      tried: `${total} requests over ${KEYS} keys, each with 3 descriptors (hits_addend ${MANY_HITS} on a ${MANY_LIMIT}/minute key, 1 on a ${ONE_LIMIT}/minute key, a refund of 1), ${CLIENTS} clients, gRPC and /json`,
      held: `OK per key and window = floor(limit / hits) exactly; the refunded counter = start − ${total}`,
      figures: {
        requests: total,
        'descriptors/request': 3,
        'gRPC p99 ms': round(clients.latency.grpc.p(99)),
        'HTTP p99 ms': round(clients.latency.http.p(99)),
      },
    });
  });
});
