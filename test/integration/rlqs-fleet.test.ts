// A fleet of five simulated Envoys with skewed demand (1:2:4:8:16) against two replicas of the
// built service sharing a real redis-server: the budget holds per second, shares converge
// within two reporting intervals, a killed replica's Envoys move to the other and the budget
// comes back whole, a reloaded rule is pushed within a second and a removed one abandoned.
import { fairShares } from '../../src/quota';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RedisServer } from '../helpers/redis-server';
import { SimEnvoy } from '../helpers/rlqs-envoy';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();

const INTERVAL_MS = 300;
const BUDGET = 150;
const DEMANDS = [10, 20, 40, 80, 160];
const BUCKET = { name: 'api', tenant: 'acme' };

function rules(budget: number | undefined): string {
  const rule =
    budget === undefined
      ? '  - bucket: { name: other }\n    blanket_rule: deny_all\n'
      : `  - bucket: { name: api, tenant: "*" }\n    requests_per_unit: ${budget}\n    unit: second\n`;
  return `domain: edge\nquota_buckets:\n${rule}`;
}

const origin = performance.now();
const nowMs = (): number => performance.now() - origin;

/**
 * Whether every Envoy holds its max-min fair share of `budget`: within 10%, or within one
 * request per reporting interval, the resolution of a demand counted in whole requests.
 */
function isFair(fleet: readonly SimEnvoy[], budget: number): boolean {
  const fair = fairShares(
    budget,
    fleet.map((_e, i) => ({ id: String(i), demand: DEMANDS[i] ?? 0 })),
  );
  return fleet.every((e, i) => {
    const want = fair.get(String(i)) ?? 0;
    const resolution = 1000 / INTERVAL_MS;
    return e.share !== undefined && Math.abs(e.share - want) <= Math.max(0.1 * want, resolution);
  });
}

/** Requests the fleet let through in each whole second from `fromMs` to `toMs`. */
function perSecond(fleet: readonly SimEnvoy[], fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let s = Math.ceil(fromMs / 1000); s < Math.floor(toMs / 1000); s++)
    out.push(fleet.reduce((sum, e) => sum + (e.allowedPerSecond.get(s) ?? 0), 0));
  return out;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs: number): Promise<number> {
  const started = nowMs();
  await eventually(check, { what, timeoutMs, intervalMs: 10 });
  return nowMs() - started;
}

test('five Envoys, two replicas, one budget', async () => {
  const redis = await RedisServer.start();
  cleanup(() => redis.destroy());
  const runtime = new RuntimeDir({ 'edge.yaml': rules(BUDGET) });
  cleanup(() => {
    runtime.destroy();
  });
  const env = {
    ...runtime.env(),
    BACKEND_TYPE: 'redis',
    REDIS_URL: `127.0.0.1:${redis.port}`,
    RLQS_TICK: '100ms',
    RLQS_SHARE_TTL: '500ms',
  };
  const replicas = await Promise.all([
    ServiceProcess.start({ env, waitFor: 'listening' }),
    ServiceProcess.start({ env, waitFor: 'listening' }),
  ]);
  for (const r of replicas) cleanup(() => r.stop());
  const [a, b] = replicas;

  // Three Envoys on A, two on B; each fails over to the other.
  const fleet = DEMANDS.map((demandPerSecond, i) => {
    const first = i % 2 === 0 ? a : b;
    const other = first === a ? b : a;
    return new SimEnvoy({
      name: `envoy${i}`,
      ports: [first.ports.grpc, other.ports.grpc],
      domain: 'edge',
      bucket: BUCKET,
      demandPerSecond,
      reportIntervalMs: INTERVAL_MS,
      nowMs,
    });
  });
  cleanup(() => {
    for (const e of fleet) e.stop();
  });
  const startedMs = nowMs();
  for (const e of fleet) e.start();

  // Convergence: within two reporting intervals of the first reports (and a tick of slack for
  // the replicas' exchange, measured on a loaded machine).
  await waitUntil(() => fleet.every((e) => e.share !== undefined), 'first assignments', 5000);
  await waitUntil(() => isFair(fleet, BUDGET), 'fair shares', 5000);
  const toConverge = nowMs() - startedMs;
  expect(toConverge).toBeLessThanOrEqual(2 * INTERVAL_MS + 400);

  // The budget per second, over three whole seconds of steady demand.
  const steadyFrom = nowMs();
  await waitUntil(() => nowMs() - steadyFrom >= 3200, 'three seconds of traffic', 5000);
  const steady = perSecond(fleet, steadyFrom, nowMs());
  expect(steady.length).toBeGreaterThanOrEqual(2);
  for (const count of steady) {
    expect(count).toBeLessThanOrEqual(BUDGET * 1.05);
    expect(count).toBeGreaterThanOrEqual(BUDGET * 0.9);
  }

  // Each replica's /rlqs lists the rule with every Envoy, its own and the other's.
  const view = (await (await fetch(b.debugUrl('/rlqs'))).json()) as {
    rules: {
      bucket: string;
      buckets: { envoys: { isLocal: boolean; share: number; demand: number }[] }[];
    }[];
  };
  expect(view.rules.map((r) => r.bucket)).toEqual(['name=api,tenant=*']);
  const envoys = view.rules[0]?.buckets[0]?.envoys ?? [];
  expect(envoys.filter((e) => e.isLocal)).toHaveLength(2);
  expect(envoys).toHaveLength(5);
  expect(envoys.reduce((sum, e) => sum + e.share, 0)).toBe(BUDGET);
  expect(envoys.map((e) => e.demand).every((d) => d > 0)).toBe(true);

  // A changed rule reaches every Envoy within a second, through both replicas.
  const before = fleet.map((e) => e.received.length);
  runtime.write({ 'edge.yaml': rules(300) });
  const pushMs = await waitUntil(
    () => fleet.every((e, i) => e.received.length > (before[i] ?? 0) && e.share !== undefined),
    'the new rule pushed',
    3000,
  );
  expect(pushMs).toBeLessThanOrEqual(1000);
  await waitUntil(() => isFair(fleet, 300), 'fair shares of the new budget', 5000);

  // A replica dies: its Envoys reconnect to the other, which hands out the whole budget again
  // once the dead replica's demand expires.
  const onA = fleet.filter((e) => e.port === a.ports.grpc);
  expect(onA.length).toBe(3);
  const killedAt = nowMs();
  await a.stop();
  await waitUntil(() => onA.every((e) => e.port === b.ports.grpc), 'reconnections to B', 5000);
  // Fair again with assignments from B, not the last ones A sent.
  const rebalanceMs = await waitUntil(
    () => onA.every((e) => e.received.some((r) => r.atMs > killedAt)) && isFair(fleet, 300),
    'shares rebalanced on B',
    5000,
  );
  const afterKill = nowMs();
  await waitUntil(() => nowMs() - afterKill >= 2200, 'two seconds on one replica', 5000);
  for (const count of perSecond(fleet, afterKill, nowMs())) {
    expect(count).toBeLessThanOrEqual(300 * 1.05);
    // All of the fleet's demand (310) but the 10 the budget denies: nothing is lost.
    expect(count).toBeGreaterThanOrEqual(300 * 0.9);
  }

  // A removed rule is abandoned by every Envoy.
  const removedAt = nowMs();
  runtime.write({ 'edge.yaml': rules(undefined) });
  const abandonMs = await waitUntil(
    () => fleet.every((e) => e.abandoned.some((t) => t >= removedAt)),
    'abandon actions',
    3000,
  );
  expect(abandonMs).toBeLessThanOrEqual(1000);

  // Figures for docs/rlqs.md.
  process.stderr.write(
    `rlqs fleet: fair shares ${Math.round(toConverge)} ms after start; steady seconds ` +
      `${steady.map(Math.round).join(', ')} of ${BUDGET}; reload pushed in ${Math.round(pushMs)} ms; ` +
      `rebalanced ${Math.round(rebalanceMs)} ms after the last reconnection, ` +
      `${Math.round(afterKill - killedAt)} ms after the kill; one replica: ${perSecond(fleet, afterKill, removedAt).map(Math.round).join(', ')} of 300; ` +
      `abandoned in ${Math.round(abandonMs)} ms\n`,
  );
}, 40_000);
