// A clean SIGTERM in every backend mode and while a configuration compiles: exit 0, nothing
// logged at error level, and nothing on the output that is not a log line (no stack trace).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { MemcachedServer } from '../helpers/memcached-server';
import { RedisCluster } from '../helpers/redis-cluster';
import { RedisServer } from '../helpers/redis-server';
import { tlsEnv, TlsRedis } from '../helpers/redis-tls';
import { RuntimeDir } from '../helpers/runtime-dir';
import { AdsServer, RATE_LIMIT_CONFIG_TYPE_URL } from '../helpers/ads-server';
import { SentinelSet } from '../helpers/sentinel-set';
import { ServiceProcess } from '../helpers/service-process';

const CONFIG = {
  'stop.yaml':
    'domain: stop\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n',
};
const cleanup = collectCleanups();

/** What a SIGTERM makes the service write on standard error before its log lines. */
const DRAINING = 'ratelimit: SIGTERM received, draining';

/**
 * The lines of a service's standard error that are not clean: error-level log lines, and lines
 * that are no log line at all (a stack trace), but for the notice of the signal.
 */
function uncleanLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && line !== DRAINING)
    .filter((line) => !line.startsWith('time=') || /\blevel=(error|fatal|panic)\b/.test(line));
}

/** Starts the service on `env`, makes one call through its backend, and stops it by SIGTERM. */
async function stopsCleanly(env: Record<string, string>): Promise<void> {
  const runtime = new RuntimeDir(CONFIG);
  cleanup(() => {
    runtime.destroy();
  });
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), LOG_LEVEL: 'info', ...env },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  try {
    const response = await client.shouldRateLimit(rlsRequest('stop', [[['k', 'v']]]));
    expect(response.overallCode).toBe('OK');
  } finally {
    client.close();
  }
  expect(await service.signal('SIGTERM')).toBe(0);
  expect(uncleanLines(service.stderr)).toEqual([]);
}

describe('a SIGTERM stops the service cleanly', () => {
  it('with the memory backend', async () => {
    await stopsCleanly({ BACKEND_TYPE: 'memory' });
  });

  it('with Redis', async () => {
    const redis = await RedisServer.start();
    cleanup(() => redis.destroy());
    await stopsCleanly({ REDIS_URL: `127.0.0.1:${redis.port}` });
  });

  it('with Redis over TLS', async () => {
    const redis = await TlsRedis.start();
    cleanup(() => redis.destroy());
    await stopsCleanly({ REDIS_URL: `127.0.0.1:${redis.port}`, ...tlsEnv('REDIS_', redis.certs) });
  });

  it('with Redis behind Sentinel', async () => {
    const sentinels = await SentinelSet.start({ replicas: 1, sentinels: 1 });
    cleanup(() => sentinels.destroy());
    await stopsCleanly({ REDIS_TYPE: 'sentinel', REDIS_URL: sentinels.url });
  }, 90_000);

  it('with a Redis Cluster', async () => {
    const cluster = await RedisCluster.start();
    cleanup(() => cluster.destroy());
    await stopsCleanly({ REDIS_TYPE: 'cluster', REDIS_URL: cluster.seeds() });
  }, 90_000);

  it('with memcached', async () => {
    const memcached = await MemcachedServer.start();
    cleanup(() => memcached.stop());
    await stopsCleanly({
      BACKEND_TYPE: 'memcache',
      MEMCACHE_HOST_PORT: `127.0.0.1:${memcached.port}`,
    });
  });
});

/** The pids of a process's children (Linux: /proc/PID/task/TID/children). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(/\s+/).map(Number);
}

/**
 * A stand-in for the service: forks the compile process (argv 2) as the service does, sends it
 * the job in the file of argv 3, prints its pid, and exits 100 ms after the compile process has
 * lowered its priority (its first act), while it checks. Bounded: it gives up after 10 s.
 */
/** The built compile process the service forks. */
const COMPILE_SCRIPT = path.resolve(
  __dirname,
  '..',
  '..',
  'dist',
  'src',
  'provider',
  'compile',
  'compile-process.js',
);

const STAND_IN_SERVICE = `
const { fork } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { getPriority } = require('node:os');
const [script, jobFile, typeUrl] = process.argv.slice(2);
const child = fork(script, [], {
  execArgv: [],
  serialization: 'advanced',
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
process.stdout.write(child.pid + '\\n');
const value = new Uint8Array(readFileSync(jobFile));
const options = { mergeDomainConfig: false, sanitizeDots: false };
child.send({ type: 'job', input: { job: { kind: 'resources', resources: [{ type_url: typeUrl, value }] }, options } });
const started = Date.now();
const poll = setInterval(() => {
  let nice = 0;
  try { nice = getPriority(child.pid); } catch {}
  if (nice > 0) { clearInterval(poll); setTimeout(() => process.exit(0), 100); }
  else if (Date.now() - started > 10000) process.exit(2);
}, 5);
`;

/** A RateLimitConfig of `count` descriptors, encoded by field number, large enough to compile a while. */
function largeRateLimitConfig(domain: string, count: number): Uint8Array {
  // RateLimitConfig: name (1), domain (2), descriptors (3) { key (1), rate_limit (3) {
  // unit (1), requests_per_unit (2) } }.
  const config = protobuf.Writer.create();
  config.uint32((1 << 3) | 2).string(`${domain}-config`);
  config.uint32((2 << 3) | 2).string(domain);
  for (let i = 0; i < count; i++) {
    const policy = protobuf.Writer.create()
      .uint32((1 << 3) | 0)
      .int32(2)
      .uint32((2 << 3) | 0)
      .uint32(i + 1)
      .finish();
    const descriptor = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string(`k${i}`)
      .uint32((3 << 3) | 2)
      .bytes(policy)
      .finish();
    config.uint32((3 << 3) | 2).bytes(descriptor);
  }
  return config.finish();
}

describe('a SIGTERM while a configuration compiles', () => {
  // Envoy Gateway's case: an xDS update compiling when the pod is asked to stop.
  it('ends the compile process of an xDS update without a stack trace or an error-level line', async () => {
    const ads = await AdsServer.start();
    cleanup(() => ads.close());
    const service = await ServiceProcess.start({
      env: {
        BACKEND_TYPE: 'memory',
        LOG_LEVEL: 'info',
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${ads.port}`,
        CONFIG_GRPC_XDS_NODE_ID: 'shutdown-test',
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
      },
      waitFor: 'listening',
    });
    cleanup(() => service.stop());
    const pid = service.pid!;
    await eventually(() => ads.rateLimitRequests(0).length === 1, {
      what: 'the first DiscoveryRequest',
    });
    expect(childrenOf(pid)).toEqual([]);
    ads.streams[0]?.write({
      version_info: 'v1',
      type_url: RATE_LIMIT_CONFIG_TYPE_URL,
      nonce: 'n1',
      resources: [
        {
          type_url: RATE_LIMIT_CONFIG_TYPE_URL,
          value: Buffer.from(largeRateLimitConfig('big', 100_000)),
        },
      ],
    });
    // The compile process is up: the SIGTERM comes while it decodes and checks the update.
    let compilers: number[] = [];
    await eventually(() => (compilers = childrenOf(pid)).length > 0, {
      what: 'the compile process',
    });
    expect(await service.signal('SIGTERM')).toBe(0);
    // The compile process shares the service's standard error and may write after it exits.
    await eventually(() => compilers.every((child) => !existsSync(`/proc/${child}`)), {
      what: 'the compile process to end',
    });
    await eventually(() => service.child.stderr?.closed === true, { what: 'standard error' });
    expect(uncleanLines(service.stderr)).toEqual([]);
  }, 60_000);

  // The service ends (SIGTERM, or a crash) while the compile process checks an update: what the
  // compile process sends then meets a closed channel. A stand-in service sends the job, waits
  // until the compile process has started (its nice value is raised first thing), and exits
  // while the check is under way.
  it('ends the compile process quietly when the service goes while it checks', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rl-compile-'));
    cleanup(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const job = path.join(dir, 'job.bin');
    writeFileSync(job, largeRateLimitConfig('gone', 100_000));
    const standIn = path.join(dir, 'service.js');
    writeFileSync(standIn, STAND_IN_SERVICE);
    const run = spawn(
      process.execPath,
      [standIn, COMPILE_SCRIPT, job, RATE_LIMIT_CONFIG_TYPE_URL],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    run.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // 'close': the stand-in has exited and the compile process, sharing its output, too.
    await new Promise<void>((resolve) => {
      run.once('close', () => {
        resolve();
      });
    });
    const compiler = Number(stdout.trim());
    expect(compiler).toBeGreaterThan(0);
    await eventually(() => !existsSync(`/proc/${compiler}`), {
      what: 'the compile process to end',
    });
    expect(stderr).toBe('');
  }, 30_000);
});
