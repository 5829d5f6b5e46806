// Rig, area 2: Redis faults under load. While gRPC calls keep coming, Redis is killed and
// restarted, frozen (SIGSTOP/SIGCONT), paused (CLIENT PAUSE), made a read-only replica, and
// given a new password: every call answers within REDIS_TIMEOUT + 100 ms plus the slowest
// answer seen while Redis was healthy (what the machine's load alone adds, measured in the same
// run), never waiting out a fault; memory stays bounded, and counting resumes without a restart.
import { writeFileSync } from 'node:fs';
import type http2 from 'node:http2';
import path from 'node:path';
import { Redis } from 'ioredis';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { connect, rawCall } from '../helpers/h2-raw';
import { unusedPort } from '../helpers/ports';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import {
  byMode,
  grpcDecision,
  grpcLoad,
  grpcRequest,
  Latencies,
  report,
  round,
  RssSampler,
  type CallResult,
} from './rig';

jest.setTimeout(byMode(120_000, 900_000));

const REDIS_TIMEOUT_MS = 500;
/** How long each fault lasts. */
const FAULT_MS = byMode(1500, 20_000);
const RSS_CEILING_MB = 250;
const GRPC = { OK: 0, DEADLINE_EXCEEDED: 4, UNAVAILABLE: 14 };

const runtime = runtimeDirForFile({
  'faults.yaml': `
domain: faults
descriptors:
  - key: busy
    rate_limit: { unit: hour, requests_per_unit: 1000000000 }
  - key: exact
    rate_limit: { unit: minute, requests_per_unit: 10 }
`,
});
const cleanup = collectCleanups();
const run = `${process.pid}_${Date.now()}`;

/** One fault: when it began, when the backend came back, and the first OK after that. */
interface FaultRecord {
  readonly name: string;
  readonly startedMs: number;
  returnedMs: number;
  firstOkMs: number | undefined;
}

class FaultLog {
  readonly faults: FaultRecord[] = [];

  begin(name: string): FaultRecord {
    const record = { name, startedMs: performance.now(), returnedMs: 0, firstOkMs: undefined };
    this.faults.push(record);
    return record;
  }

  /** Every OK answer: the first one after a fault's backend returned is its recovery. */
  readonly onResult = (result: CallResult): void => {
    if (result.answer.grpcStatus !== GRPC.OK) return;
    const at = result.startedMs + result.answer.ms;
    for (const f of this.faults)
      if (f.returnedMs > 0 && f.firstOkMs === undefined && at >= f.returnedMs) f.firstOkMs = at;
  };
}

function admin(port: number, password: string): Redis {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    password,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    disconnectTimeout: 50,
  });
  client.on('error', () => undefined);
  return client;
}

async function hold(ms: number): Promise<void> {
  // The load keeps running meanwhile; this only spaces the steps of a fault.
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The longest a call may take: REDIS_TIMEOUT plus the larger of (a) 100 ms and the slowest
 * answer of the healthy warm-up, which is what the machine's load alone adds, and (b) half of
 * what is left of a fault after the timeout. A call that waited for the fault to end instead
 * of timing out takes up to the fault's length, so a bound halfway between the two still
 * catches it, while a loaded 2-core machine's stalls do not decide the test.
 */
function latencyBound(results: readonly CallResult[], faultsBeganMs: number): number {
  const healthy = results.filter((r) => r.startedMs + r.answer.ms < faultsBeganMs);
  expect(healthy.length).toBeGreaterThan(0);
  const baselineMs = healthy.reduce((worst, r) => Math.max(worst, r.answer.ms), 0);
  const halfway = (FAULT_MS - REDIS_TIMEOUT_MS) / 2;
  const bound = REDIS_TIMEOUT_MS + Math.max(100 + baselineMs, halfway);
  if (bound >= FAULT_MS)
    throw new Error(
      `the slowest healthy answer took ${round(baselineMs)} ms, so the bound (${round(bound)} ms) is not below a fault's ${FAULT_MS} ms: too loaded to tell a timeout from a wait`,
    );
  return bound;
}

it('answers within REDIS_TIMEOUT through every fault, and recovers without a restart', async () => {
  const first = 'first-password';
  const second = 'second-password';
  const redis = await RedisServer.start({ password: first });
  cleanup(() => redis.destroy());
  const authFile = path.join(runtime.base, 'redis-auth');
  writeFileSync(authFile, first);
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'redis',
      REDIS_URL: `127.0.0.1:${redis.port}`,
      REDIS_AUTH_FILE: authFile,
      REDIS_TIMEOUT: `${REDIS_TIMEOUT_MS}ms`,
    },
  });
  cleanup(() => service.stop());
  const sessions: http2.ClientHttp2Session[] = [];
  for (let i = 0; i < 4; i++) sessions.push(await connect(service.ports.grpc));
  cleanup(() => {
    for (const s of sessions) s.destroy();
  });
  const rss = new RssSampler(service.pid ?? 0);
  const log = new FaultLog();
  let isDone = false;
  const load = grpcLoad({
    sessions,
    concurrency: 16,
    request: (i) => grpcRequest('faults', [{ entries: [['busy', `${run}_${i % 100}`]] }]),
    until: () => isDone,
    headers: { 'grpc-timeout': '2S' },
    onResult: log.onResult,
  });

  const waitForRecovery = (fault: FaultRecord): Promise<unknown> =>
    eventually(() => fault.firstOkMs !== undefined, {
      what: `a successful call after ${fault.name}`,
      timeoutMs: 15_000,
    });

  await hold(byMode(1000, 10_000));
  // 1. SIGKILL, then a new redis-server on the same port.
  const kill = log.begin('SIGKILL and restart');
  await redis.stop();
  await hold(FAULT_MS);
  await redis.restart();
  kill.returnedMs = performance.now();
  await waitForRecovery(kill);
  // 2. A hang: the process stops answering without closing anything.
  const hang = log.begin('SIGSTOP / SIGCONT');
  process.kill(redis.pid ?? 0, 'SIGSTOP');
  await hold(FAULT_MS);
  process.kill(redis.pid ?? 0, 'SIGCONT');
  hang.returnedMs = performance.now();
  await waitForRecovery(hang);
  // 3. CLIENT PAUSE: the server holds every command for a while.
  const direct = admin(redis.port, first);
  cleanup(() => {
    direct.disconnect();
  });
  const pause = log.begin('CLIENT PAUSE');
  await direct.call('CLIENT', 'PAUSE', String(FAULT_MS), 'ALL');
  await hold(FAULT_MS);
  pause.returnedMs = performance.now();
  await waitForRecovery(pause);
  // 4. READONLY: a replica of a master that is not there refuses every write.
  const readonly = log.begin('READONLY replies');
  await direct.call('REPLICAOF', '127.0.0.1', String(await unusedPort()));
  await hold(FAULT_MS);
  await direct.call('REPLICAOF', 'NO', 'ONE');
  readonly.returnedMs = performance.now();
  await waitForRecovery(readonly);
  // 5. A new password, and every connection cut: the service's reconnections are refused
  // until its REDIS_AUTH_FILE holds the new one (it is read again on every connection).
  const password = log.begin('password change');
  await direct.call('CONFIG', 'SET', 'requirepass', second);
  await direct.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await hold(FAULT_MS);
  writeFileSync(authFile, second);
  password.returnedMs = performance.now();
  await waitForRecovery(password);
  await hold(byMode(500, 5000));
  isDone = true;
  const results = await load;
  rss.stop();

  // Counting resumes exactly: a fresh key limited to 10 a minute takes 10 of 15.
  const exact = await Promise.all(
    Array.from({ length: 15 }, async (_, i) => {
      const session = sessions[i % sessions.length];
      if (session === undefined) throw new Error('no session');
      const answer = await rawCall(
        session,
        grpcRequest('faults', [{ entries: [['exact', `${run}_after`]] }]),
      );
      return answer.grpcStatus === GRPC.OK ? grpcDecision(answer.body).overallCode : 'FAILED';
    }),
  );
  expect(exact.filter((c) => c === 'OK')).toHaveLength(10);

  const latency = new Latencies();
  const statuses = new Map<string, number>();
  for (const r of results) {
    latency.add(r.answer.ms);
    const name = String(r.answer.grpcStatus);
    statuses.set(name, (statuses.get(name) ?? 0) + 1);
  }
  // Nothing but OK, UNAVAILABLE (the backend failed) or DEADLINE_EXCEEDED.
  expect([...statuses.keys()].filter((s) => !['0', '4', '14'].includes(s))).toEqual([]);
  const bound = latencyBound(results, kill.startedMs);
  expect(latency.max).toBeLessThanOrEqual(bound);
  expect(rss.peakMb).toBeLessThan(RSS_CEILING_MB);
  const recoveries = log.faults.map((f) => [f.name, round((f.firstOkMs ?? 0) - f.returnedMs, 0)]);
  report({
    test: 'Redis faults under load',
    tried: `16 concurrent gRPC callers while Redis was SIGKILLed and restarted, SIGSTOPped, CLIENT PAUSEd, made a READONLY replica and given a new password (REDIS_AUTH_FILE rewritten), ${FAULT_MS} ms each, REDIS_TIMEOUT ${REDIS_TIMEOUT_MS} ms`,
    held: `every call answered (OK, UNAVAILABLE or DEADLINE_EXCEEDED) within REDIS_TIMEOUT + 100 ms + the slowest healthy answer; RSS under ${RSS_CEILING_MB} MiB; counting exact again without a restart`,
    figures: {
      calls: results.length,
      ok: statuses.get('0') ?? 0,
      unavailable: statuses.get('14') ?? 0,
      'deadline exceeded': statuses.get('4') ?? 0,
      'max answer ms': round(latency.max),
      'bound ms': round(bound),
      'p99 ms': round(latency.p(99)),
      'peak RSS MiB': round(rss.peakMb),
      ...Object.fromEntries(
        recoveries.map(([name, ms]) => [`first success after ${name}, ms`, ms]),
      ),
    },
  });
});
