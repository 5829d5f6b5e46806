// Start-up and shutdown of the built server: bad settings, SIGTERM draining, SIGINT.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { eventually } from '../helpers/eventually';
import { LOOPBACK_LISTENERS } from '../helpers/ports';
import { RlsClient, rlsRequest, type WireResponse } from '../helpers/grpc-client';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { BIN, ServiceProcess } from '../helpers/service-process';

const CONFIG = {
  'life.yaml':
    'domain: life\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 100 }\n',
};

const runtime = runtimeDirForFile(CONFIG);

it('refuses bad settings at start-up, naming the setting, the value and what is accepted', () => {
  const result = spawnSync(process.execPath, [BIN.ratelimit], {
    env: {
      PATH: process.env.PATH ?? '',
      BACKEND_TYPE: 'postgres',
      REDIS_AUTH: 'a',
      REDIS_AUTH_FILE: '/x',
      USE_STATSD: 'maybe',
    },
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(result.status).toBe(1);
  expect(result.stderr).toBe(
    'ratelimit: invalid settings:\n' +
      '  USE_STATSD: "maybe" is not valid; accepted: true, false, 1, 0, t, f, TRUE, FALSE, True, False\n' +
      '  BACKEND_TYPE: "postgres" is not valid; accepted: redis, memcache, memory\n' +
      '  REDIS_AUTH: REDIS_AUTH and REDIS_AUTH_FILE are both set; they exclude each other: set only one\n',
  );
});

it('on SIGTERM turns unhealthy at once, finishes in-flight calls, and exits 0', async () => {
  const redis = await RedisServer.start();
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), REDIS_URL: `127.0.0.1:${redis.port}` },
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  const blocker = redis.client();
  try {
    const statuses: string[] = [];
    const watch = client.watchHealth((s) => statuses.push(s));
    await eventually(() => statuses.includes('SERVING'), { what: 'the health stream' });
    // Hold Redis for a moment so the next call is in flight when the signal arrives.
    const sleeping = blocker.call('DEBUG', 'SLEEP', '0.5');
    const inFlight = client.shouldRateLimit(rlsRequest('life', [[['k', 'drain']]]));
    // The call must have reached the service before the signal.
    await eventually(
      async () =>
        (await (await fetch(service.debugUrl('/stats'))).text()).includes(
          'ratelimit_server.ShouldRateLimit.total_requests: 1',
        ),
      {
        what: 'the call to arrive',
      },
    );
    const exit = service.signal('SIGTERM');
    await eventually(() => statuses.includes('NOT_SERVING'), {
      what: 'NOT_SERVING on the health stream',
    });
    const response: WireResponse = await inFlight;
    expect(response.overallCode).toBe('OK');
    await sleeping;
    expect(await exit).toBe(0);
    watch.cancel();
    await expect(fetch(service.url('/healthcheck'))).rejects.toThrow();
  } finally {
    client.close();
    blocker.disconnect();
    await service.stop();
    await redis.destroy();
  }
});

it('exits 0 on SIGINT', async () => {
  const service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  expect(await service.signal('SIGINT')).toBe(0);
  expect(service.logs).toContain('SIGINT received, draining');
});

it('flushes statistics to standard output on shutdown when USE_STATSD=false', async () => {
  const service = await ServiceProcess.start({ env: { ...runtime.env(), BACKEND_TYPE: 'memory' } });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  try {
    await client.shouldRateLimit(rlsRequest('life', [[['k', 'stats']]], 3));
  } finally {
    client.close();
  }
  expect(await service.signal('SIGTERM')).toBe(0);
  expect(service.logs).toContain('ratelimit.service.rate_limit.life.k.total_hits:3|c');
  expect(service.logs).toContain('ratelimit_server.ShouldRateLimit.total_requests:1|c');
  expect(service.logs).toMatch(/ratelimit_server\.ShouldRateLimit\.response_time:[\d.]+\|ms/);
});

/** The pids of a process's children (Linux: /proc/PID/task/PID/children). */
function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process runs (a zombie waiting for its parent to reap it does not). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

it('started by `npm run demo`, ends when npm is killed by its pid with SIGKILL', async () => {
  const root = path.resolve(__dirname, '..', '..');
  const npm = spawn('npm', ['run', 'demo'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...LOOPBACK_LISTENERS,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const npmPid = npm.pid!;
  let servicePid = 0;
  try {
    let http = 0;
    await eventually(
      () =>
        (http = Number(/msg="listening" .*?http=127\.0\.0\.1:(\d+)/.exec(output)?.[1] ?? 0)) > 0,
      { what: 'the demo listening', timeoutMs: 30_000 },
    );
    // npm runs `sh -c 'exec node bin/demo.js'`: the service is npm's child (or grandchild, with
    // a shell that forks even so).
    const under = [...childrenOf(npmPid), ...childrenOf(npmPid).flatMap(childrenOf)];
    servicePid =
      under.find((pid) => {
        const [program = '', script = ''] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(
          '\0',
        );
        return path.basename(program) === 'node' && script.endsWith('demo.js');
      }) ?? 0;
    expect(servicePid).toBeGreaterThan(0);
    // SIGTERM and SIGINT npm passes on (npm-signals.test.ts); SIGKILL it cannot, and the
    // service, left under another parent, finds npm gone by itself.
    process.kill(npmPid, 'SIGKILL');
    await eventually(() => !isRunning(servicePid), {
      what: 'the service to end',
      timeoutMs: 15_000,
    });
    expect(await accepts(http)).toBe(false);
    expect(output).toContain('the npm process that started this one is gone, draining');
  } finally {
    for (const pid of [servicePid, npmPid])
      if (pid > 0 && isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
}, 60_000);
