// deploy/monitoring against Debian's prometheus: it scrapes the built service (USE_PROMETHEUS)
// every second while the service takes over-limit calls, slow calls, a refused configuration,
// RLQS streams, a Redis outage, and beside it a service in xDS mode that NACKs an update and
// loses its management server; then every query of the committed dashboard answers series,
// and every alert expression answers series, which means each alert's condition holds.
// The 20 ms the latency alert guards is Envoy's default for the rate limit filter's `timeout`
// (source/extensions/filters/http/ratelimit/config.cc, createFilterFactoryFromProtoTyped:
// PROTOBUF_GET_MS_OR_DEFAULT(proto_config, timeout, 20)).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { Redis } from 'ioredis';
import { parse } from 'yaml';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';
import { PrometheusServer } from '../../helpers/prometheus-server';
import { RedisServer } from '../../helpers/redis-server';
import { QuotaStreamClient, usage } from '../../helpers/rlqs-stream';
import { runtimeDirForFile } from '../../helpers/runtime-dir';
import { ServiceProcess } from '../../helpers/service-process';
import { SimProcess } from '../../helpers/sim-process';
import { grpcTransport, req, type Transport } from '../../helpers/transports';

const MONITORING = path.resolve(__dirname, '..', '..', '..', 'deploy', 'monitoring');
const RULES_FILE = path.join(MONITORING, 'ratelimit-alerts.yaml');

/** MAX_CONNECTIONS_PER_PEER, above what the test's own clients open from 127.0.0.1. */
const PER_PEER = 20;

const CONFIG = {
  'api.yaml': `
domain: api
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 5 }
  - key: trial
    shadow_mode: true
    rate_limit: { unit: hour, requests_per_unit: 1 }
`,
  'quota.yaml': `
domain: edge
quota_buckets:
  - bucket: { name: api }
    requests_per_unit: 100
    unit: second
`,
};

interface Query {
  readonly source: string;
  readonly expr: string;
}

function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(
    readFileSync(path.join(MONITORING, 'ratelimit-dashboard.json'), 'utf8'),
  ) as { panels: { title: string; targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      source: `dashboard panel "${p.title}"`,
      // What Grafana would send with every job and pod selected, over a one-minute rate.
      expr: t.expr
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$job', '.+')
        .replaceAll('$instance', '.+'),
    })),
  );
}

function alertQueries(): Query[] {
  const rules = parse(readFileSync(RULES_FILE, 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  return rules.groups.flatMap((g) =>
    g.rules.map((r) => ({ source: `alert ${r.alert}`, expr: r.expr })),
  );
}

const runtime = runtimeDirForFile(CONFIG);
const cleanup = collectCleanups();

/** Over-limit and shadow-mode calls, within and near the limit too. */
async function decisions(rls: Transport): Promise<void> {
  for (let i = 0; i < 20; i++) await rls.send(req('api', [[['user', 'u1']]]));
  for (let i = 0; i < 4; i++) await rls.send(req('api', [[['trial', 't1']]]));
  await rls.send(req('api', [[['user', `u${Date.now()}`]]]));
}

/**
 * Calls held in flight by CLIENT PAUSE: Redis has answered the pause before the calls are sent,
 * so each of them waits out its 100 ms, whatever the machine's load; that puts the p99 of the
 * few hundred calls of this test past the alert's 15 ms.
 */
async function slowCalls(rls: Transport, redisPort: number): Promise<void> {
  const admin = new Redis({ port: redisPort, host: '127.0.0.1', lazyConnect: true });
  await admin.connect();
  try {
    for (let round = 0; round < 3; round++) {
      await admin.call('CLIENT', 'PAUSE', '100', 'ALL');
      await Promise.all(
        Array.from({ length: 5 }, (_, i) => rls.send(req('api', [[['user', `slow${i}`]]]))),
      );
    }
  } finally {
    admin.disconnect();
  }
}

/** Streams watching a bucket, one refused at RLQS_MAX_STREAMS, and refused reports. */
async function quotaStreams(grpcPort: number): Promise<QuotaStreamClient[]> {
  const streams = [QuotaStreamClient.open(grpcPort), QuotaStreamClient.open(grpcPort)];
  for (const s of streams)
    cleanup(() => {
      s.close();
    });
  for (const s of streams) s.report('edge', [usage({ name: 'api' }), usage({ name: 'other' })]);
  for (const s of streams) await s.waitForAnswers(1);
  // Past half of RLQS_MAX_STREAMS (4), this peer's share while it is the only one: refused.
  const refused = QuotaStreamClient.open(grpcPort);
  cleanup(() => {
    refused.close();
  });
  refused.report('edge', [usage({ name: 'api' })]);
  // A usage without a bucket id is left out; another domain on a stream ends it, invalid.
  streams[0]?.report(undefined, [{ timeElapsed: { seconds: 1 }, numRequestsAllowed: 1 }]);
  streams[1]?.report('other', [usage({ name: 'api' })]);
  return streams;
}

/**
 * Connections from another loopback address (another peer, on Linux) past
 * MAX_CONNECTIONS_PER_PEER: the excess is refused at accept and counted.
 */
async function refusedConnections(port: number, count: number): Promise<void> {
  let closed = 0;
  const sockets = Array.from({ length: count }, () => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.5' });
    socket.on('error', () => undefined);
    socket.once('close', () => (closed += 1));
    return socket;
  });
  try {
    // Held open until the service has accepted them all and refused the excess.
    await eventually(() => closed >= count - PER_PEER, { what: 'the excess refused at accept' });
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

/**
 * A second service, in xDS mode, on the bundled management server: it ACKs, then NACKs a bad
 * resource, then loses the server (the xDS panels and the disconnected alert).
 */
async function xdsService(): Promise<{ sim: SimProcess; service: ServiceProcess }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-monitoring-sim-'));
  cleanup(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  writeFileSync(
    path.join(dir, 'x.yaml'),
    'domain: x\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  );
  const sim = await SimProcess.start(dir);
  cleanup(() => sim.kill());
  const service = await ServiceProcess.start({
    env: {
      BACKEND_TYPE: 'memory',
      CONFIG_TYPE: 'GRPC_XDS_SOTW',
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${sim.port}`,
      CONFIG_GRPC_XDS_NODE_ID: `node-${sim.port}`,
      XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '100ms',
      XDS_CLIENT_BACKOFF_MAX_INTERVAL: '400ms',
      USE_PROMETHEUS: 'true',
      PROMETHEUS_ADDR: '127.0.0.1:0',
    },
  });
  cleanup(() => service.stop());
  return { sim, service };
}

describe('the dashboard and the alerts on a real Prometheus', () => {
  test('every dashboard query and every alert expression answers series', async () => {
    const redis = await RedisServer.start();
    cleanup(() => redis.stop());
    const service = await ServiceProcess.start({
      env: {
        ...runtime.env(),
        BACKEND_TYPE: 'redis',
        REDIS_URL: `127.0.0.1:${redis.port}`,
        USE_PROMETHEUS: 'true',
        PROMETHEUS_ADDR: '127.0.0.1:0',
        BACKEND_FAILURE_THRESHOLD: '3',
        BACKEND_FAILURE_COOLDOWN: '1h',
        RLQS_MAX_STREAMS: '4',
        RLQS_MAX_BUCKETS_PER_STREAM: '1',
        MAX_CONNECTIONS_PER_PEER: String(PER_PEER),
      },
    });
    cleanup(() => service.stop());
    const xds = await xdsService();
    const prometheus = await PrometheusServer.start(
      [`127.0.0.1:${service.ports.metrics}`, `127.0.0.1:${xds.service.ports.metrics}`],
      [RULES_FILE],
    );
    cleanup(() => prometheus.stop());
    const rls = grpcTransport(service.ports.grpc);
    cleanup(() => {
      rls.close();
    });

    await decisions(rls);
    // A series appears with its first call; a rate needs a sample of it from before the slow
    // calls, or they are all in its first sample and never in an increase.
    await eventually(
      async () =>
        (await prometheus.query('ratelimit_service_response_time_seconds_bucket{le="+Inf"}'))
          .length > 0,
      { what: 'a scrape of the first calls', timeoutMs: 20_000, intervalMs: 250 },
    );
    await slowCalls(rls, redis.port);
    await quotaStreams(service.ports.grpc);
    await refusedConnections(service.ports.grpc, 30);
    runtime.write({ 'broken.yaml': 'domain: [' });
    await eventually(async () => (await service.stat('ratelimit.service.config_load_error')) >= 1);
    await decisions(rls);
    // The xDS service refuses a bad resource (a NACK), then its management server goes away.
    await xds.sim.post('/bad-resource');
    await eventually(async () => (await xds.service.stat('ratelimit.xds.nacks')) >= 1, {
      what: 'the NACK of the bad resource',
    });
    await xds.sim.kill();
    // Redis goes away: calls fail, then the breaker opens and answers for it.
    await redis.stop();
    for (let i = 0; i < 6; i++) await rls.failure(req('api', [[['user', 'u2']]]));

    // Three scrapes of the last counter to appear, so every rate has two samples of it.
    await eventually(
      async () =>
        (
          await prometheus.query(
            'count_over_time(ratelimit_circuit_breaker_redis_answered_error[1m]) >= 3',
          )
        ).length > 0,
      { what: 'three scrapes of the open breaker', timeoutMs: 20_000, intervalMs: 250 },
    );

    await eventually(
      async () => (await prometheus.query('ratelimit_xds_connected == 0')).length > 0,
      { what: 'a scrape of the lost xDS stream', timeoutMs: 20_000, intervalMs: 250 },
    );

    const queries = [...dashboardQueries(), ...alertQueries()];
    const empty: string[] = [];
    for (const q of queries) {
      const samples = await prometheus.query(q.expr);
      if (samples.length === 0) empty.push(`${q.source}: ${q.expr}`);
    }
    expect(empty).toEqual([]);
    // Prometheus loaded every rule and evaluates each without error.
    const rules = await prometheus.rules();
    expect(rules.map((r) => [r.name, r.health, r.lastError ?? ''])).toEqual(
      alertQueries().map((q) => [q.source.replace('alert ', ''), 'ok', '']),
    );
  });
});
