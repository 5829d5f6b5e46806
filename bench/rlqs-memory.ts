// The service's RSS while many RLQS buckets are watched and after their streams close
// (`npm run build && node dist/bench/rlqs-memory.js [streams] [buckets]`): it starts the built
// service on the memory backend, opens the streams, each reporting all its buckets every second
// for 8 s, closes them, and samples RSS until 32 s after. Not a row of `npm run bench`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { messageType } from '../src/lib/proto';

const ROOT = path.resolve(__dirname, '..', '..');
const PATH = '/envoy.service.rate_limit_quota.v3.RateLimitQuotaService/StreamRateLimitQuotas';
const GRPC_PORT = 18_482;

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function report(stream: number, buckets: number): Buffer {
  const type = messageType(
    'envoy/service/rate_limit_quota/v3/rlqs.proto',
    'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
  );
  const usages = Array.from({ length: buckets }, (_, b) => ({
    bucketId: { bucket: { name: 'bench', id: `s${stream}b${b}` } },
    timeElapsed: { seconds: 1 },
    numRequestsAllowed: 5,
  }));
  const body = type
    .encode(type.fromObject({ domain: 'memory', bucketQuotaUsages: usages }))
    .finish();
  const out = Buffer.alloc(5 + body.length);
  out.writeUInt32BE(body.length, 1);
  out.set(body, 5);
  return out;
}

async function main(): Promise<void> {
  const streams = Number(process.argv[2] ?? '10');
  const buckets = Number(process.argv[3] ?? '10000');
  const work = mkdtempSync(path.join(tmpdir(), 'rlqs-memory-'));
  mkdirSync(path.join(work, 'config'));
  writeFileSync(
    path.join(work, 'config', 'memory.yaml'),
    "domain: memory\nquota_buckets:\n  - { bucket: { name: bench, id: '*' }, requests_per_unit: 1000000, unit: second }\n",
  );
  const server = spawn(process.execPath, [path.join(ROOT, 'bin', 'ratelimit.js')], {
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(GRPC_PORT + 1),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(GRPC_PORT),
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: String(GRPC_PORT + 2),
      BACKEND_TYPE: 'memory',
      RUNTIME_ROOT: work,
      RUNTIME_SUBDIRECTORY: '',
      RUNTIME_APPDIRECTORY: 'config',
      RUNTIME_WATCH_ROOT: 'false',
      USE_STATSD: 'false',
      LOG_LEVEL: 'error',
      RLQS_MAX_BUCKETS: String(Math.max(100_000, streams * buckets)),
      RLQS_MAX_BUCKETS_PER_STREAM: String(Math.max(10_000, buckets)),
    },
  });
  const pid = server.pid ?? 0;
  try {
    await delay(3000);
    console.log(`start: ${rssMb(pid).toFixed(0)} MB`);
    const sessions = Array.from({ length: streams }, () => {
      const session = http2.connect(`http://127.0.0.1:${GRPC_PORT}`);
      session.on('error', () => undefined);
      return session;
    });
    const calls = sessions.map((session, s) => {
      const call = session.request({
        ':method': 'POST',
        ':path': PATH,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      call.on('data', () => undefined);
      call.on('error', () => undefined);
      return { call, message: report(s, buckets) };
    });
    let peak = 0;
    for (let second = 0; second < 8; second++) {
      for (const { call, message } of calls) call.write(message);
      for (let i = 0; i < 4; i++) {
        await delay(250);
        peak = Math.max(peak, rssMb(pid));
      }
    }
    console.log(`${streams} streams x ${buckets} buckets, peak: ${peak.toFixed(0)} MB`);
    for (const session of sessions) session.destroy();
    let waited = 0;
    for (const after of [2, 12, 32]) {
      await delay((after - waited) * 1000);
      waited = after;
      console.log(`${after} s after the streams closed: ${rssMb(pid).toFixed(0)} MB`);
    }
  } finally {
    server.kill();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
