// The budget through what a fleet does: a restart of the service and then a join, and the
// shortest assignment_ttl accepted, with Envoys that behave as the rate_limit_quota filter
// (test/helpers/rlqs-envoy.ts: global_client_impl.cc at Envoy main cb2a49b0, onQuotaResponseImpl
// keeping a token bucket protoTokenBucketsEq finds equal, seconds not compared; onRemoteClose
// keeping the cache; a lost stream started again at the next 5 s tick). The rates checked are
// those of the Envoys' live token buckets, not what the service sent.
import { MIN_ASSIGNMENT_TTL_MS } from '../../../src/quota';
import { BUCKET, EnvoyFleet } from './envoy-fleet';
import { ruleSet } from './quota-fakes';

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

function rules(perSecond: number, extra: Record<string, unknown> = {}) {
  return ruleSet('edge', [
    {
      bucket: { name: 'api', tenant: '*' },
      requests_per_unit: perSecond,
      unit: 'second',
      ...extra,
    },
  ]);
}

describe('a restart of the service, then a join', () => {
  it.each([
    [1, 1, 2, undefined],
    [10, 20, 25, undefined],
    [10, 20, 25, 25],
  ])(
    'budget %d/s, %d Envoys then %d, max_tokens %s: the budget holds over the 30 s after the restart',
    async (budget, before, after, maxTokens) => {
      const fleet = new EnvoyFleet(
        rules(budget, maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      );
      // Every Envoy wants the whole budget, each starting its timer at its own moment.
      for (let i = 0; i < before; i++) {
        fleet.join(budget);
        await fleet.run(5000 / before);
      }
      await fleet.run(60_000);
      const atRestart = fleet.admitted();
      await fleet.kill();
      await fleet.run(1000);
      fleet.restart();
      // Every Envoy has reconnected at its next tick and reported once, and the new process
      // has sent them nothing yet (it holds for 6 s after it starts): it knows not what they hold.
      await fleet.run(5500);
      for (let i = before; i < after; i++) fleet.join(budget);
      await fleet.run(23_500);
      expect(fleet.admitted() - atRestart).toBeLessThanOrEqual(budget * 30 * 1.05);
      expect(sum(fleet.rates())).toBeLessThanOrEqual(budget * 1.02);
      // Each Envoy runs at what it was last sent.
      expect(fleet.staleLimiters()).toEqual([]);
      for (const m of fleet.members) expect(m.client.bucket(BUCKET)).toBeDefined();
    },
  );
});

test('the shortest assignment_ttl accepted: no reporting Envoy is abandoned, every 5 s window holds', async () => {
  const ttl = `${String(MIN_ASSIGNMENT_TTL_MS / 1000)}s`;
  const fleet = new EnvoyFleet(rules(30, { assignment_ttl: ttl }));
  for (let i = 0; i < 3; i++) {
    fleet.join(20);
    await fleet.run(1700);
  }
  const windows: number[] = [];
  let last = fleet.admitted();
  for (let w = 0; w < 12; w++) {
    await fleet.run(5000);
    windows.push(fleet.admitted() - last);
    last = fleet.admitted();
  }
  // The first window after the joins still has their first full buckets.
  for (const admitted of windows.slice(1)) expect(admitted).toBeLessThanOrEqual(30 * 5 * 1.05);
  for (const m of fleet.members) {
    // Never abandoned: no abandon_action, and the bucket made once.
    const actions = m.client.received.flatMap((r) => r.bucketAction ?? []);
    expect(actions.filter((a) => a.abandonAction !== undefined)).toEqual([]);
    expect(
      m.client.sent.filter((r) => r.bucketQuotaUsages?.[0]?.timeElapsed?.seconds === 0),
    ).toHaveLength(1);
  }
  // Each 5 s window near the budget: the Envoys were held to it, not starved.
  for (const admitted of windows.slice(1)) expect(admitted).toBeGreaterThanOrEqual(30 * 5 * 0.9);
});
