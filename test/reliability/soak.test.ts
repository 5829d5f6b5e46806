// Rig, area 4: soak. Mixed traffic (gRPC and /json, hot and cold keys, several descriptors,
// hits_addend and refunds) against Redis while the configuration is reloaded every few
// seconds: throughput, p99 and RSS per period, and no growth of memory from one half of the
// run to the other. Long mode runs 10 minutes; short mode (in `npm test`) a few seconds.
import type http2 from 'node:http2';
import { collectCleanups } from '../helpers/cleanups';
import { connect } from '../helpers/h2-raw';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import {
  afterMs,
  byMode,
  grpcDecision,
  grpcLoad,
  grpcRequest,
  jsonRequest,
  Latencies,
  report,
  round,
  RssSampler,
  type RigDescriptor,
} from './rig';

const DURATION_MS = byMode(12_000, 10 * 60_000);
const PERIOD_MS = byMode(3000, 60_000);
const RELOAD_EVERY_MS = byMode(1500, 5000);
const RSS_CEILING_MB = 250;
jest.setTimeout(DURATION_MS + 120_000);

/** The configuration of the n-th reload: the limits move, so every reload really changes it. */
function config(n: number): string {
  return `
domain: soak
descriptors:
  - key: hot
    rate_limit: { unit: second, requests_per_unit: ${50 + (n % 5)} }
  - key: cold
    rate_limit: { unit: minute, requests_per_unit: ${100 + n} }
  - key: tenant
    descriptors:
      - key: path
        rate_limit: { unit: hour, requests_per_unit: 1000000 }
`;
}

const runtime = runtimeDirForFile({ 'soak.yaml': config(0) });
const cleanup = collectCleanups();
const run = `${process.pid}_${Date.now()}`;

/** The i-th request of the mix: hot keys, a long tail of cold ones, nested entries, refunds. */
function mix(i: number): RigDescriptor[] {
  const descriptors: RigDescriptor[] = [{ entries: [['hot', `h${i % 5}`]] }];
  if (i % 3 === 0) descriptors.push({ entries: [['cold', `${run}_${i % 20_000}`]] });
  if (i % 5 === 0) {
    descriptors.push({
      entries: [
        ['tenant', `t${i % 7}`],
        ['path', `/p${i % 13}`],
      ],
      hitsAddend: 1 + (i % 4),
      isNegativeHits: i % 10 === 0,
    });
  }
  return descriptors;
}

/** Per period: calls answered, their p99 and the RSS at its end. */
interface Period {
  calls: number;
  errors: number;
  readonly latency: Latencies;
  rssMb: number;
}

it('holds throughput, p99 and memory through mixed traffic and reloads', async () => {
  const redis = await RedisServer.start();
  cleanup(() => redis.destroy());
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'redis',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      REDIS_TIMEOUT: '1s',
    },
  });
  cleanup(() => service.stop());
  const sessions: http2.ClientHttp2Session[] = [];
  for (let i = 0; i < 4; i++) sessions.push(await connect(service.ports.grpc));
  cleanup(() => {
    for (const s of sessions) s.destroy();
  });
  const rss = new RssSampler(service.pid ?? 0, 1000);
  const loadsBefore = await service.stat('ratelimit.service.config_load_success');
  const started = performance.now();
  const periods: Period[] = [];
  const periodAt = (ms: number): Period => {
    const index = Math.floor((ms - started) / PERIOD_MS);
    while (periods.length <= index)
      periods.push({ calls: 0, errors: 0, latency: new Latencies(), rssMb: 0 });
    return periods[index] as Period;
  };
  const record = (startedMs: number, ms: number, ok: boolean): void => {
    const period = periodAt(startedMs);
    period.calls += 1;
    period.latency.add(ms);
    if (!ok) period.errors += 1;
  };

  let reloads = 0;
  const reloader = setInterval(() => {
    reloads += 1;
    runtime.write({ 'soak.yaml': config(reloads) });
  }, RELOAD_EVERY_MS);
  const sampler = setInterval(() => {
    const last = rss.series.at(-1);
    if (last !== undefined) periodAt(performance.now()).rssMb = last.mb;
  }, 500);
  cleanup(() => {
    clearInterval(reloader);
    clearInterval(sampler);
    return Promise.resolve();
  });

  const until = afterMs(DURATION_MS);
  const codes = new Map<string, number>();
  const grpc = grpcLoad({
    sessions,
    concurrency: 8,
    request: (i) => grpcRequest('soak', mix(i)),
    until,
    headers: { 'grpc-timeout': '2S' },
    onResult: ({ startedMs, answer }) => {
      const ok = answer.grpcStatus === 0;
      record(startedMs, answer.ms, ok);
      const code = ok ? grpcDecision(answer.body).overallCode : `status ${answer.grpcStatus}`;
      codes.set(code, (codes.get(code) ?? 0) + 1);
    },
  });
  const json = async (worker: number): Promise<void> => {
    for (let i = worker; !until(); i += 2) {
      const startedMs = performance.now();
      const res = await fetch(service.url('/json'), {
        method: 'POST',
        body: jsonRequest('soak', mix(i)),
      });
      await res.arrayBuffer();
      record(startedMs, performance.now() - startedMs, res.status === 200 || res.status === 429);
    }
  };
  await Promise.all([grpc, json(0), json(1)]);
  clearInterval(reloader);
  clearInterval(sampler);
  rss.stop();
  const elapsedMs = performance.now() - started;
  const loads = (await service.stat('ratelimit.service.config_load_success')) - loadsBefore;

  const calls = periods.reduce((a, p) => a + p.calls, 0);
  const errors = periods.reduce((a, p) => a + p.errors, 0);
  // The per-period figures leave out the last calls, begun as the run ended, in a period of
  // their own that had barely started.
  const full = periods.slice(0, Math.floor(elapsedMs / PERIOD_MS));
  expect(errors).toBe(0);
  // Both decisions occurred: the hot keys' per-second limits did refuse some calls.
  expect(codes.get('OK') ?? 0).toBeGreaterThan(0);
  expect(codes.get('OVER_LIMIT') ?? 0).toBeGreaterThan(0);
  // Reloads were taken (the watcher may fold two writes into one load).
  expect(loads).toBeGreaterThanOrEqual(Math.floor(reloads / 2));
  expect(rss.peakMb).toBeLessThan(RSS_CEILING_MB);
  // No growth: after the first period (warm-up), the second half's RSS stays within 25% (and
  // 20 MiB) of the first half's.
  const settled = rss.series.filter((s) => s.atMs > PERIOD_MS);
  const half = Math.floor(settled.length / 2);
  const mean = (xs: readonly { mb: number }[]): number =>
    xs.reduce((a, s) => a + s.mb, 0) / Math.max(1, xs.length);
  const firstHalf = mean(settled.slice(0, half));
  const secondHalf = mean(settled.slice(half));
  expect(secondHalf).toBeLessThan(Math.max(firstHalf * 1.25, firstHalf + 20));

  const perPeriod = (f: (p: Period) => number): string => full.map((p) => round(f(p))).join(' / ');
  report({
    test: 'soak',
    tried: `${round(elapsedMs / 60_000)} min of mixed traffic on Redis (8 gRPC callers and 2 /json callers; hot and cold keys, nested descriptors, hits_addend 1-4, refunds), the configuration rewritten every ${RELOAD_EVERY_MS / 1000} s`,
    held: `no error; OK and OVER_LIMIT answered; every reload taken; RSS under ${RSS_CEILING_MB} MiB with no growth from the first half to the second`,
    figures: {
      calls,
      'calls/s': round(calls / (elapsedMs / 1000), 0),
      'OVER_LIMIT share': `${round((100 * (codes.get('OVER_LIMIT') ?? 0)) / Math.max(1, calls))}%`,
      reloads,
      'config loads': loads,
      [`calls/s per ${PERIOD_MS / 1000} s`]: perPeriod((p) => p.calls / (PERIOD_MS / 1000)),
      [`p99 ms per ${PERIOD_MS / 1000} s`]: perPeriod((p) => p.latency.p(99)),
      [`RSS MiB per ${PERIOD_MS / 1000} s`]: perPeriod((p) => p.rssMb),
      'RSS first half / second half MiB': `${round(firstHalf)} / ${round(secondHalf)}`,
      'peak RSS MiB': round(rss.peakMb),
    },
  });
});
