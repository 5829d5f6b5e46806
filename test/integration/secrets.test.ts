// Secrets never leak: runs of the service given known passwords, an auth file, credentials in a
// URL, xDS headers and a TLS key, through healthy traffic, a password change, an outage, failed
// start-ups and refused settings; every log line, answer, debug page and statistic of every run
// is then searched for each secret.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { unusedPort } from '../helpers/ports';
import { RedisServer } from '../helpers/redis-server';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const SECRET = {
  auth: 'auth-Pw-7c1e9a',
  authFile: 'file-Pw-4b8d2f',
  url: 'url-Pw-93e0aa',
  sentinelAuth: 'sentinel-Pw-5f2c71',
  header: 'header-Tok-d61b0e',
  key: 'key-Material-0a9f3c',
};

const CONFIG = `
domain: secrets
descriptors:
  - key: hour
    rate_limit: { unit: hour, requests_per_unit: 2 }
  - key: second
    rate_limit: { unit: second, requests_per_unit: 1 }
`;
const runtime = runtimeDirForFile({ 'secrets.yaml': CONFIG });
const cleanup = collectCleanups();
/** Everything any run printed or answered, with where it came from. */
const outputs: { where: string; text: string }[] = [];

const DEBUG_PATHS = [
  '/',
  '/rlconfig',
  '/stats',
  '/rules',
  '/health',
  '/healthcheck/components',
  '/decisions/recent',
  '/counters?domain=secrets&descriptor=hour=h',
  '/debug/pprof/',
  '/debug/pprof/heap',
];

async function collectPages(service: ServiceProcess, run: string): Promise<void> {
  for (const p of DEBUG_PATHS) {
    const res = await fetch(service.debugUrl(p));
    outputs.push({ where: `${run} debug ${p}`, text: await res.text() });
  }
  const metrics = await fetch(`http://127.0.0.1:${service.ports.metrics}/metrics`);
  outputs.push({ where: `${run} /metrics`, text: await metrics.text() });
  for (const p of ['/healthcheck', '/nothing']) {
    const res = await fetch(service.url(p));
    outputs.push({ where: `${run} http ${p}`, text: await res.text() });
  }
}

async function ask(service: ServiceProcess, client: RlsClient, run: string): Promise<void> {
  for (const key of ['hour', 'second']) {
    const request = rlsRequest('secrets', [[[key, 'h']]]);
    try {
      outputs.push({
        where: `${run} gRPC`,
        text: JSON.stringify(await client.shouldRateLimit(request)),
      });
    } catch (err: unknown) {
      outputs.push({ where: `${run} gRPC error`, text: String(err) });
    }
    const res = await fetch(service.url('/json'), {
      method: 'POST',
      body: JSON.stringify({
        domain: 'secrets',
        descriptors: [{ entries: [{ key, value: 'h' }] }],
      }),
    });
    outputs.push({ where: `${run} /json`, text: await res.text() });
  }
}

const OBSERVED = {
  LOG_LEVEL: 'debug',
  USE_PROMETHEUS: 'true',
  PROMETHEUS_ADDR: '127.0.0.1:0',
  REDIS_TIMEOUT: '500ms',
  REDIS_STARTUP_INITIAL_INTERVAL: '50ms',
};

it('a healthy run, a password change and an outage', async () => {
  const main = await RedisServer.start({ password: SECRET.auth });
  cleanup(() => main.destroy());
  const perSecond = await RedisServer.start({ password: SECRET.authFile });
  cleanup(() => perSecond.destroy());
  const authFile = path.join(runtime.base, 'redis-auth');
  writeFileSync(authFile, `${SECRET.authFile}\n`);
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      ...OBSERVED,
      REDIS_URL: `127.0.0.1:${main.port}`,
      REDIS_AUTH: SECRET.auth,
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_URL: `127.0.0.1:${perSecond.port}`,
      REDIS_PERSECOND_AUTH_FILE: authFile,
      DEBUG_RECENT_DECISIONS: '10',
    },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
    return Promise.resolve();
  });
  await ask(service, client, 'healthy');
  await ask(service, client, 'healthy');
  await collectPages(service, 'healthy');

  // The password changes under the service, then the per-second server goes away.
  const admin = main.client();
  await admin.call('CONFIG', 'SET', 'requirepass', 'another-one');
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
  admin.disconnect();
  await perSecond.stop();
  for (const key of ['hour', 'second']) {
    const err = await eventually(() => client.error(rlsRequest('secrets', [[[key, 'b']]])), {
      what: `a failing call on ${key}`,
    });
    outputs.push({ where: `broken ${key}`, text: `${err.message} ${err.details}` });
  }
  await ask(service, client, 'broken');
  await collectPages(service, 'broken');
  await service.stop();
  outputs.push({ where: 'healthy and broken logs', text: service.logs });
});

it('start-ups that fail and settings that are refused', async () => {
  const dead = await unusedPort();
  const runs: Record<string, Record<string, string>> = {
    'unreachable URL with credentials': {
      REDIS_URL: `redis://user:${SECRET.url}@127.0.0.1:${dead}`,
      REDIS_STARTUP_MAX_ELAPSED_TIME: '300ms',
    },
    'malformed URL with credentials': {
      REDIS_URL: `redis://user:${SECRET.url}@`,
      REDIS_TYPE: 'sentinel',
    },
    'AUTH and AUTH_FILE both': { REDIS_AUTH: SECRET.auth, REDIS_AUTH_FILE: '/nonexistent' },
    'sentinel with a password, unreachable': {
      REDIS_TYPE: 'sentinel',
      REDIS_URL: `mymaster,127.0.0.1:${dead}`,
      REDIS_SENTINEL_AUTH: SECRET.sentinelAuth,
      REDIS_AUTH: SECRET.auth,
      REDIS_STARTUP_MAX_ELAPSED_TIME: '300ms',
    },
    'unreadable TLS key': {
      BACKEND_TYPE: 'memory',
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: path.join(runtime.base, 'tls.crt'),
      GRPC_SERVER_TLS_KEY: path.join(runtime.base, 'tls.key'),
    },
  };
  writeFileSync(path.join(runtime.base, 'tls.crt'), `not a certificate ${SECRET.key}\n`);
  writeFileSync(
    path.join(runtime.base, 'tls.key'),
    `-----BEGIN PRIVATE KEY-----\n${SECRET.key}\n-----END PRIVATE KEY-----\n`,
  );
  for (const [name, env] of Object.entries(runs)) {
    const service = await ServiceProcess.start({
      env: { ...runtime.env(), ...OBSERVED, ...env },
      waitFor: 'nothing',
    });
    cleanup(() => service.stop());
    // Each refuses to start: the point is what it says while doing so.
    expect({ name, code: await service.waitForExit() }).toEqual({ name, code: 1 });
    outputs.push({ where: name, text: service.logs });
  }
});

it('xDS with secret headers, its server unreachable', async () => {
  const service = await ServiceProcess.start({
    env: {
      ...OBSERVED,
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${await unusedPort()}`,
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: `authorization:Bearer ${SECRET.header}`,
      FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
    },
    waitFor: 'listening',
  });
  cleanup(() => service.stop());
  await collectPages(service, 'xds');
  await service.stop();
  outputs.push({ where: 'xds logs', text: service.logs });
});

it('no secret appears in any output of those runs', () => {
  // The runs did produce output worth searching: logs, pages and answers.
  expect(outputs.length).toBeGreaterThan(40);
  expect(outputs.map((o) => o.text).join('\n')).toMatch(/redis/i);
  const leaks = outputs.flatMap(({ where, text }) =>
    Object.entries(SECRET)
      .filter(([, secret]) => text.includes(secret))
      .map(([name]) => `${name} in ${where}`),
  );
  expect(leaks).toEqual([]);
});
