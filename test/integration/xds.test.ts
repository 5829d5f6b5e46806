// The built service configured by the bundled control-plane simulator over ADS, each a process.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeCertificates, type Certificates } from '../helpers/certs';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RlsClient, rlsRequest } from '../helpers/grpc-client';
import { loggedPorts } from '../helpers/ports';
import { ServiceProcess } from '../helpers/service-process';
import { SimProcess } from '../helpers/sim-process';

const cleanup = collectCleanups();

function domainFile(domain: string, rpu: number): string {
  return `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: ${rpu} }\n`;
}

function configDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-sim-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fast backoff so reconnection is quick in tests. */
const FAST = {
  XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '100ms',
  XDS_CLIENT_BACKOFF_MAX_INTERVAL: '400ms',
  CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '100ms',
};

async function startService(
  sim: SimProcess,
  env: Record<string, string> = {},
  waitFor: 'healthy' | 'listening' = 'healthy',
) {
  const service = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
      CONFIG_GRPC_XDS_NODE_ID: `node-${sim.port}`,
      ...FAST,
      ...env,
    },
    waitFor,
  });
  cleanup(() => service.stop());
  const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
  cleanup(() => {
    client.close();
  });
  return { service, client };
}

async function limitOf(client: RlsClient, domain: string): Promise<number | undefined> {
  const res = await client.shouldRateLimit(rlsRequest(domain, [[['k', `v${Math.random()}`]]]));
  return res.statuses?.[0]?.currentLimit?.requestsPerUnit;
}

describe('with a plaintext management server', () => {
  let dir: string;
  let sim: SimProcess;
  let service: ServiceProcess;
  let client: RlsClient;

  beforeAll(async () => {
    dir = configDir({ 'a.yaml': domainFile('a', 5), 'b.yaml': domainFile('b', 7) });
    sim = await SimProcess.start(dir);
    cleanup(() => sim.kill());
    ({ service, client } = await startService(sim, {
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'x-team:payments,x-env:dev',
      CONFIG_GRPC_XDS_NODE_METADATA: 'zone=eu-1,tier:gold',
    }));
  });

  it('loads the initial configuration and ACKs it', async () => {
    expect(await limitOf(client, 'a')).toBe(5);
    expect(await limitOf(client, 'b')).toBe(7);
    await eventually(
      async () => {
        const status = await sim.status();
        return (
          status.version.startsWith('1-') &&
          status.nodes[`node-${sim.port}`]?.lastAckVersion === status.version
        );
      },
      { what: 'the ACK' },
    );
  });

  it('reports its connection and the version the server last sent, on /stats, /health and /rules', async () => {
    const { version } = await sim.status();
    await eventually(async () => (await service.stat('ratelimit.xds.acks')) >= 2, {
      what: 'the ACKs of both subscribed types',
    });
    expect(await service.stat('ratelimit.xds.connected')).toBe(1);
    expect(await service.stat(`ratelimit.xds.last_ack_version.__version=${version}`)).toBe(1);
    const health = (await (await fetch(service.debugUrl('/health'))).json()) as {
      xds: { connected: boolean; lastAck: { version: string } | null };
    };
    expect(health.xds).toMatchObject({ connected: true, lastAck: { version } });
    const rules = (await (await fetch(service.debugUrl('/rules'))).json()) as {
      origin: { version: string };
    };
    expect(rules.origin.version).toBe(version);
  });

  it('sends its extra headers, node metadata and user agent', async () => {
    const node = (await sim.status()).nodes[`node-${sim.port}`];
    expect(node?.headers).toMatchObject({ 'x-team': 'payments', 'x-env': 'dev' });
    expect(node?.metadata).toEqual({ zone: 'eu-1', tier: 'gold' });

    expect(node?.userAgent).toMatch(/^ratelimit-ts\/\d+\.\d+\.\d+$/);
  });

  it('applies an update and removes a domain that is gone', async () => {
    writeFileSync(path.join(dir, 'a.yaml'), domainFile('a', 9));
    await eventually(async () => (await limitOf(client, 'a')) === 9, { what: 'the update' });
    unlinkSync(path.join(dir, 'b.yaml'));
    await eventually(async () => (await limitOf(client, 'b')) === undefined, {
      what: 'the removal',
    });
    const version = (await sim.status()).version;
    await eventually(
      async () => (await sim.status()).nodes[`node-${sim.port}`]?.lastAckVersion === version,
      { what: 'the last ACK' },
    );
  });

  it('NACKs a bad resource with the resource and the reason, and keeps the old configuration', async () => {
    const before = await service.stat('ratelimit.service.config_load_error');
    await sim.post('/bad-resource');
    await eventually(
      async () => (await sim.status()).nodes[`node-${sim.port}`]?.lastNack !== undefined,
      { what: 'the NACK' },
    );
    const status = await sim.status();
    const node = status.nodes[`node-${sim.port}`];
    expect(node?.lastNack).toEqual({
      version: status.version,
      message:
        "resource bad-resource: invalid rate limit unit 'UNKNOWN'; accepted: second, minute, hour, day, week, month, year (at descriptors[0].rate_limit)",
      at: expect.any(String) as unknown,
    });
    expect(node?.lastAckVersion).not.toBe(status.version);
    expect(await limitOf(client, 'a')).toBe(9);
    expect(await limitOf(client, 'bad')).toBeUndefined();
    expect(await service.stat('ratelimit.service.config_load_error')).toBe(before + 1);
    // One line for the refusal: its reason, what keeps serving, and the version refused.
    const line = await service.logged(
      "configuration refused: resource bad-resource: invalid rate limit unit 'UNKNOWN'; accepted: second, minute, hour, day, week, month, year (at descriptors[0].rate_limit); the previous configuration keeps serving",
    );
    expect(line).toContain(`version=${status.version}`);
    expect(service.logs.split('\n').filter((l) => l.includes('bad-resource'))).toEqual([line]);
    await sim.post('/bad-resource', undefined, 'DELETE');
    await eventually(
      async () => {
        const s = await sim.status();
        return s.nodes[`node-${sim.port}`]?.lastAckVersion === s.version;
      },
      { what: 'an ACK after the fix' },
    );
  });

  it('takes a pushed configuration', async () => {
    await sim.post('/push?name=pushed', domainFile('pushed', 3));
    await eventually(async () => (await limitOf(client, 'pushed')) === 3, {
      what: 'the pushed domain',
    });
  });

  it('keeps serving while the server is gone, reconnects with its last version, and takes the next update', async () => {
    const acked = (await sim.status()).nodes[`node-${sim.port}`]?.lastAckVersion ?? '';
    await sim.kill();
    await eventually(() => service.logs.includes('the xDS stream ended; reconnecting'), {
      what: 'the disconnect',
    });
    expect(await limitOf(client, 'a')).toBe(9);
    // The restarted server knows nothing of pushes; its files are a only.
    await sim.restart();
    await eventually(
      () => sim.logs.includes(`node "node-${sim.port}" connected with version "${acked}"`),
      {
        what: 'a reconnect carrying the last accepted version',
        timeoutMs: 15_000,
      },
    );
    writeFileSync(path.join(dir, 'c.yaml'), domainFile('c', 11));
    await eventually(async () => (await limitOf(client, 'c')) === 11, { what: 'the next update' });
    expect(await limitOf(client, 'pushed')).toBeUndefined();
  });

  it('reconnects after the server drops every stream', async () => {
    const ended = (service.logs.match(/the xDS stream ended; reconnecting/g) ?? []).length;
    await sim.post('/disconnect');
    await eventually(
      () => (service.logs.match(/the xDS stream ended; reconnecting/g) ?? []).length > ended,
      { what: 'the dropped stream' },
    );
    expect(service.logs).toContain('details="disconnected by the simulator"');
    writeFileSync(path.join(dir, 'd.yaml'), domainFile('d', 13));
    await eventually(async () => (await limitOf(client, 'd')) === 13, {
      what: 'an update after the drop',
      timeoutMs: 15_000,
    });
  });
});

describe('start-up', () => {
  // The reference waits for its first configuration, its xDS client retrying the connection
  // (envoyproxy/ratelimit: src/provider/xds_grpc_sotw_provider.go, initXdsClient and
  // getGrpcConnection; src/service/ratelimit.go, NewService blocks on the first update unless
  // forceStart; src/service_cmd/runner/runner.go opens the listeners after it).
  it('started before its management server, waits and retries, then serves what it sends', async () => {
    const dir = configDir({ 'a.yaml': domainFile('a', 2) });
    const sim = await SimProcess.start(dir);
    cleanup(() => sim.kill());
    await sim.kill();
    const service = await ServiceProcess.start({
      env: {
        BACKEND_TYPE: 'memory',
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
        CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '500ms',
        LOG_LEVEL: 'debug',
      },
      waitFor: 'nothing',
    });
    cleanup(() => service.stop());
    // For five seconds, retrying: alive, not listening (not ready), never exited.
    const startedAt = Date.now();
    await eventually(
      () => {
        const { exitCode, signalCode } = service.child;
        if (exitCode !== null || signalCode !== null)
          throw new Error(`exited with ${String(exitCode ?? signalCode)}`);
        expect(loggedPorts(service.logs).http).toBeUndefined();
        return Date.now() - startedAt >= 5000;
      },
      { what: 'five seconds of waiting', timeoutMs: 10_000, intervalMs: 200 },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n--- service output ---\n${service.logs}`);
    });
    await sim.restart();
    await eventually(
      async () => (await fetch(service.url('/healthcheck')).catch(() => undefined))?.status === 200,
      { what: 'ready once the management server is up', timeoutMs: 15_000 },
    );
    const client = new RlsClient(`127.0.0.1:${service.ports.grpc}`);
    cleanup(() => {
      client.close();
    });
    expect(await limitOf(client, 'a')).toBe(2);
    // Each retry alike is a debug line; the loss was one warning, the recovery one info line.
    const lines = service.logs.split('\n');
    const ended = lines.filter((l) => l.includes('msg="the xDS stream ended; reconnecting"'));
    expect(ended.filter((l) => l.includes('level=warning'))).toHaveLength(1);
    expect(ended.filter((l) => l.includes('level=debug')).length).toBeGreaterThanOrEqual(3);
    expect(
      lines.filter((l) => l.includes('msg="connected to the xDS management server"')),
    ).toHaveLength(1);
  });

  it('starts without configuration when told to, unhealthy until the server answers', async () => {
    const dir = configDir({ 'a.yaml': domainFile('a', 2) });
    const sim = await SimProcess.start(dir);
    cleanup(() => sim.kill());
    await sim.kill();
    const { service } = await startService(
      sim,
      {
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
      },
      'listening',
    );
    await eventually(
      async () => (await fetch(service.url('/healthcheck')).catch(() => undefined))?.status === 500,
      { what: 'an unhealthy start' },
    );
    await sim.restart();
    await eventually(async () => (await fetch(service.url('/healthcheck'))).status === 200, {
      what: 'healthy once configured',
      timeoutMs: 15_000,
    });
  });
});

describe('over TLS', () => {
  let certs: Certificates;

  beforeAll(() => {
    certs = makeCertificates('sim.test');
    cleanup(() => {
      certs.destroy();
    });
  });

  /** A simulator serving `a` with `rpu` over TLS, asking for client certificates with `mutual`. */
  async function tlsSim(rpu: number, mutual: boolean): Promise<SimProcess> {
    const sim = await SimProcess.start(configDir({ 'a.yaml': domainFile('a', rpu) }), [
      '-tls_cert',
      certs.serverCert,
      '-tls_key',
      certs.serverKey,
      ...(mutual ? ['-client_ca', certs.caCert] : []),
    ]);
    cleanup(() => sim.kill());
    return sim;
  }

  /** Settings that verify the simulator against `ca` and its name. */
  const tlsEnv = (ca: string): Record<string, string> => ({
    CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
    CONFIG_GRPC_XDS_SERVER_TLS_CACERT: ca,
    CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'sim.test',
  });

  it('verifies the server against the CA and the name in CONFIG_GRPC_XDS_SERVER_TLS_SAN', async () => {
    const sim = await tlsSim(4, false);
    const { client } = await startService(sim, tlsEnv(certs.caCert));
    expect(await limitOf(client, 'a')).toBe(4);
  });

  it('presents a client certificate for mutual TLS', async () => {
    const sim = await tlsSim(6, true);
    const { client } = await startService(sim, {
      ...tlsEnv(certs.caCert),
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.clientCert,
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.clientKey,
    });
    expect(await limitOf(client, 'a')).toBe(6);
  });

  it('gets no configuration from a server it cannot verify, or without its certificate', async () => {
    const sim = await tlsSim(8, true);
    const untrusted = await startService(
      sim,
      // Each retry alike is logged at debug.
      {
        ...tlsEnv(certs.otherCaCert),
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        LOG_LEVEL: 'debug',
      },
      'listening',
    );
    const anonymous = await startService(
      sim,
      { ...tlsEnv(certs.caCert), FORCE_START_WITHOUT_INITIAL_CONFIG: 'true', LOG_LEVEL: 'debug' },
      'listening',
    );
    for (const { service } of [untrusted, anonymous]) {
      await eventually(
        () => (service.logs.match(/the xDS stream ended; reconnecting/g) ?? []).length >= 2,
        { what: 'repeated failures' },
      );
      expect(service.logs).not.toContain('accepted an xDS update');
    }
    expect(Object.keys((await sim.status()).nodes)).toEqual([]);
  });

  // grpc-js reports a connection the server closes after the handshake only as "Failed to
  // connect" (its transport.js keeps that default message when the socket closes before an
  // error); the service asks the server itself and logs the TLS reason, as for the others.
  it('logs why the server refuses its client certificate', async () => {
    const sim = await tlsSim(8, true);
    const { service } = await startService(
      sim,
      {
        ...tlsEnv(certs.caCert),
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        CONFIG_GRPC_XDS_CLIENT_TLS_CERT: certs.otherClientCert,
        CONFIG_GRPC_XDS_CLIENT_TLS_KEY: certs.otherClientKey,
      },
      'listening',
    );
    const refusal = await eventually(
      () =>
        service.logs
          .split('\n')
          .find((line) => line.includes('xDS stream ended') && line.includes('tls=')) ?? false,
      { what: 'a reconnect line with the TLS reason' },
    );
    // The simulator (Node's TLS) closes the handshake without an alert; a server that sends
    // one has it named instead.
    expect(refusal).toMatch(
      /tls="the server (closed the connection in the TLS handshake without an alert|refused this client's certificate \(TLS alert '[a-z ]+'\))/,
    );
    expect(refusal).toContain('check CONFIG_GRPC_XDS_CLIENT_TLS_CERT');
  });
});
