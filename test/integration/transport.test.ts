// Listeners: a unix socket for gRPC, connection ageing, and the README's demo command.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { LOOPBACK_LISTENERS, loggedPorts } from '../helpers/ports';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';
import { collectCleanups } from '../helpers/cleanups';

const CONFIG = {
  't.yaml':
    'domain: t\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
};
const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();

it('listens for gRPC on GRPC_UDS', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-uds-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const socket = path.join(dir, 'rls.sock');
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), BACKEND_TYPE: 'memory', GRPC_UDS: socket },
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`unix:${socket}`);
  cleanup(() => {
    client.close();
  });
  const res = await client.shouldRateLimit(rlsRequest('t', [[['k', 'uds']]]));
  expect(res.statuses?.[0]?.limitRemaining).toBe(4);
});

it('closes connections after GRPC_MAX_CONNECTION_AGE and clients reconnect', async () => {
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      BACKEND_TYPE: 'memory',
      GRPC_MAX_CONNECTION_AGE: '300ms',
      GRPC_MAX_CONNECTION_AGE_GRACE: '100ms',
    },
  });
  cleanup(() => service.stop());
  const channel = new grpc.Channel(
    `127.0.0.1:${service.ports.grpc}`,
    grpc.credentials.createInsecure(),
    {},
  );
  let isWatching = true;
  cleanup(() => {
    isWatching = false;
    channel.close();
  });
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  const states: grpc.connectivityState[] = [];
  const watch = (): void => {
    if (!isWatching) return;
    const current = channel.getConnectivityState(true);
    states.push(current);
    // Watched again when the 2 s pass without a change too: on a loaded machine the aged-out
    // connection can take longer than that, and a watch that stopped there saw nothing more.
    channel.watchConnectivityState(current, Date.now() + 2_000, () => {
      watch();
    });
  };
  watch();
  // Polled too: a watch's callback runs later than the change it reports, and a reconnect on
  // loopback can be READY again by then, hiding the aged-out connection from the watch alone.
  const poll = setInterval(() => {
    const current = channel.getConnectivityState(false);
    if (states[states.length - 1] !== current) states.push(current);
  }, 5);
  cleanup(() => {
    clearInterval(poll);
  });
  await eventually(() => states.includes(grpc.connectivityState.READY), { what: 'a connection' });
  // The server sends GOAWAY once the connection is old enough; the channel goes idle or reconnects.
  await eventually(() => states.lastIndexOf(grpc.connectivityState.READY) < states.length - 1, {
    what: 'the connection to be aged out',
    timeoutMs: 10_000,
  });
  expect((await client.shouldRateLimit(rlsRequest('t', [[['k', 'age']]]))).overallCode).toBe('OK');
});

it('starts the demo (the README command) on the memory backend with the example config', async () => {
  const child = spawn(process.execPath, [path.resolve(__dirname, '..', '..', 'bin', 'demo.js')], {
    env: { PATH: process.env.PATH ?? '', ...LOOPBACK_LISTENERS },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  cleanup(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else {
          child.once('exit', () => {
            resolve();
          });
          child.kill('SIGKILL');
        }
      }),
  );
  const ports = await eventually(
    () => {
      const { http } = loggedPorts(log);
      if (http === undefined) throw new Error(`no listening line yet:\n${log}`);
      return { http };
    },
    { what: 'the demo to listen', timeoutMs: 15_000 },
  );
  await eventually(
    async () => (await fetch(`http://127.0.0.1:${ports.http}/healthcheck`)).status === 200,
    { what: 'the demo', timeoutMs: 15_000 },
  );
  const post = (descriptor: { key: string; value: string }[]): Promise<Response> =>
    fetch(`http://127.0.0.1:${ports.http}/json`, {
      method: 'POST',
      body: JSON.stringify({ domain: 'example', descriptors: [{ entries: descriptor }] }),
    });
  expect((await post([{ key: 'user_agent', value: 'bad-bot' }])).status).toBe(429);
  const res = await post([
    { key: 'tier', value: 'free' },
    { key: 'user', value: 'ada' },
  ]);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({
    statuses: [{ currentLimit: { requestsPerUnit: 100, unit: 'HOUR' }, limitRemaining: 99 }],
  });
});
