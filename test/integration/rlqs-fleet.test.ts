// A fleet of five Envoys with skewed demand (1:2:4:8:16), each behaving as the rate_limit_quota
// filter does (test/helpers/rlqs-envoy.ts, written from Envoy's source), against two replicas of
// the built service sharing a real redis-server: no stream ends on what an Envoy sends, the
// budget holds per 5 s window, shares converge within two report ticks, a SIGKILLed replica's
// Envoys move to the other at their next tick and the budget holds, a reloaded rule is pushed
// within a second and a removed one abandoned.
// Liberty: Envoy's report timer fires every 5 s; here every second (TICK_MS), in real time, so
// the run takes seconds; time_elapsed is still whole seconds of the Envoys' clock.
import { fairShares } from '../../src/quota';
import { collectCleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/eventually';
import { RedisServer } from '../helpers/redis-server';
import { SimEnvoy } from '../helpers/rlqs-sim-envoy';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();

const TICK_MS = 1000;
const WINDOW_MS = 5000;
const BUDGET = 150;
const DEMANDS = [10, 20, 40, 80, 160];
const BUCKET = { name: 'api', tenant: 'acme' };
const INVALID_ARGUMENT = 3;

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
 * Whether every Envoy enforces its max-min fair share of `budget`: within 10%, or one request a
 * second (a demand counted in whole requests per tick).
 */
function isFair(fleet: readonly SimEnvoy[], budget: number): boolean {
  const fair = fairShares(
    budget,
    fleet.map((_e, i) => ({ id: String(i), demand: DEMANDS[i] ?? 0 })),
  );
  return fleet.every((e, i) => {
    const want = fair.get(String(i)) ?? 0;
    const share = e.share;
    return share !== undefined && Math.abs(share - want) <= Math.max(0.1 * want, 1000 / TICK_MS);
  });
}

/** Requests the fleet let through from `fromMs` (a whole second) for `ms`. */
function admitted(fleet: readonly SimEnvoy[], fromMs: number, ms: number): number {
  let sum = 0;
  for (let s = fromMs / 1000; s < (fromMs + ms) / 1000; s++)
    for (const e of fleet) sum += e.allowedPerSecond.get(s) ?? 0;
  return sum;
}

async function waitUntil(check: () => boolean, what: string, timeoutMs: number): Promise<number> {
  const started = nowMs();
  await eventually(check, { what, timeoutMs, intervalMs: 10 });
  return nowMs() - started;
}

/** Waits for the next whole second and returns it. */
async function nextSecond(): Promise<number> {
  const at = Math.ceil(nowMs() / 1000) * 1000;
  await waitUntil(() => nowMs() >= at, 'the next second', 2000);
  return at;
}

/** Admitted requests in a 5 s window starting at the next whole second. */
async function window(fleet: readonly SimEnvoy[]): Promise<number> {
  const from = await nextSecond();
  await waitUntil(() => nowMs() >= from + WINDOW_MS + 50, 'a 5 s window', WINDOW_MS + 2000);
  return admitted(fleet, from, WINDOW_MS);
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

  // Three Envoys on A, two on B; each moves to the other when its stream is lost.
  const fleet = DEMANDS.map((demandPerSecond, i) => {
    const first = i % 2 === 0 ? a : b;
    const other = first === a ? b : a;
    return new SimEnvoy({
      name: `envoy${i}`,
      ports: [first.ports.grpc, other.ports.grpc],
      domain: 'edge',
      bucket: BUCKET,
      demandPerSecond,
      reportIntervalMs: TICK_MS,
      nowMs,
    });
  });
  cleanup(() => {
    for (const e of fleet) e.stop();
  });
  for (const e of fleet) e.start();

  // Convergence: within two ticks of the first report (a tick measures the demand, the next
  // corrects what the first shares let through), plus the replicas' exchange on a loaded machine.
  await waitUntil(() => fleet.every((e) => e.share !== undefined), 'first assignments', 5000);
  const firstMs = nowMs();
  await waitUntil(() => isFair(fleet, BUDGET), 'fair shares', 8000);
  const toConverge = nowMs() - firstMs;
  expect(toConverge).toBeLessThanOrEqual(2 * TICK_MS + 600);

  // The budget per 5 s window, twice, with steady demand.
  const steady = [await window(fleet), await window(fleet)];
  for (const count of steady) {
    expect(count).toBeLessThanOrEqual(BUDGET * 5 * 1.05);
    expect(count).toBeGreaterThanOrEqual(BUDGET * 5 * 0.9);
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
  expect(envoys.reduce((sum, e) => sum + e.share, 0)).toBeCloseTo(BUDGET, 6);
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
  await waitUntil(() => isFair(fleet, 300), 'fair shares of the new budget', 8000);

  // A replica is SIGKILLed: its Envoys keep their assignments (30 s TTL) and open their next
  // stream, at their next tick, on the other replica, which shares the budget among all five.
  const onA = fleet.filter((e) => e.port === a.ports.grpc);
  expect(onA.length).toBe(3);
  const killedAt = nowMs();
  await a.stop();
  await waitUntil(() => onA.every((e) => e.port === b.ports.grpc), 'reconnections to B', 5000);
  const reconnectMs = nowMs() - killedAt;
  expect(reconnectMs).toBeLessThanOrEqual(TICK_MS + 500);
  const rebalanceMs = await waitUntil(
    () => onA.every((e) => e.received.some((r) => r.atMs > killedAt)) && isFair(fleet, 300),
    'shares rebalanced on B',
    5000,
  );
  const afterKill = await window(fleet);
  expect(afterKill).toBeLessThanOrEqual(300 * 5 * 1.05);
  // All of the fleet's demand (310) but the 10 the budget denies: nothing is lost.
  expect(afterKill).toBeGreaterThanOrEqual(300 * 5 * 0.9);

  // A removed rule is abandoned by every Envoy.
  const removedAt = nowMs();
  runtime.write({ 'edge.yaml': rules(undefined) });
  const abandonMs = await waitUntil(
    () => fleet.every((e) => e.abandoned.some((t) => t >= removedAt)),
    'abandon actions',
    3000,
  );
  expect(abandonMs).toBeLessThanOrEqual(1000);

  // No stream ever ended on what an Envoy sent: only the killed replica's streams were lost.
  const ends = fleet.flatMap((e) => e.client.streamEnds);
  expect(ends.filter((end) => end.code === INVALID_ARGUMENT)).toEqual([]);
  expect(fleet.map((e) => e.client.streamEnds.length)).toEqual(
    fleet.map((e) => (onA.includes(e) ? 1 : 0)),
  );

  // Figures for docs/rlqs.md.
  process.stderr.write(
    `rlqs fleet: fair shares ${Math.round(toConverge)} ms after the first assignments; 5 s windows ` +
      `${steady.join(', ')} of ${BUDGET * 5}; reload pushed in ${Math.round(pushMs)} ms; ` +
      `reconnected ${Math.round(reconnectMs)} ms after the kill, rebalanced ${Math.round(rebalanceMs)} ms later; ` +
      `one replica: ${afterKill} of 1500; abandoned in ${Math.round(abandonMs)} ms\n`,
  );
}, 60_000);
