// Random fleets of Envoy-faithful clients (test/helpers/rlqs-envoy.ts) through random restarts,
// reconnects, joins and leaves: the rates Envoy computes for its live token buckets
// (global_client_impl.cc at Envoy main cb2a49b0, createTokenBucketFromAction) add up to at most
// the budget once each event has settled, and every token bucket runs at the rate of the
// assignment it holds: no change of rate was one that protoTokenBucketsEq, which compares
// max_tokens, tokens_per_fill and fill_interval.nanos but not the seconds, took for no change.
import fc from 'fast-check';
import { QUOTA_UNIT_SECONDS, type QuotaUnit } from '../../../src/quota';
import { EnvoyFleet } from './envoy-fleet';
import { ruleSet } from './quota-fakes';

type FleetEvent =
  | { readonly kind: 'join'; readonly count: number }
  | { readonly kind: 'leave'; readonly count: number }
  | { readonly kind: 'reconnect'; readonly count: number }
  | {
      readonly kind: 'restart';
      readonly downMs: number;
      /** Envoys shut down while the service is down, and Envoys new just after its start. */
      readonly leave: number;
      readonly join: number;
    };

const eventArb: fc.Arbitrary<FleetEvent> = fc.oneof(
  fc.record({ kind: fc.constant('join' as const), count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('leave' as const), count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ kind: fc.constant('reconnect' as const), count: fc.integer({ min: 1, max: 40 }) }),
  fc.record({
    kind: fc.constant('restart' as const),
    downMs: fc.integer({ min: 0, max: 3000 }),
    leave: fc.integer({ min: 0, max: 40 }),
    join: fc.integer({ min: 0, max: 40 }),
  }),
);

const scenarioArb = fc.record({
  envoys: fc.integer({ min: 1, max: 200 }),
  budget: fc.integer({ min: 1, max: 100_000 }),
  unit: fc.constantFrom<QuotaUnit>('SECOND', 'MINUTE', 'HOUR'),
  events: fc.array(eventArb, { minLength: 2, maxLength: 4 }),
  seed: fc.integer({ min: 0, max: 1000 }),
});

/** Requests a second for Envoy `i`: small, so runs stay quick; uneven, so shares differ. */
const demandOf = (i: number, seed: number): number => ((i * 7 + seed) % 11) / 2;

/** Applies one event; the Envoys it touches are taken from the fleet's order. */
async function apply(fleet: EnvoyFleet, event: FleetEvent, seed: number): Promise<void> {
  switch (event.kind) {
    case 'join':
      for (let i = 0; i < event.count; i++) {
        fleet.join(demandOf(fleet.members.length + i, seed));
        await fleet.run(250);
      }
      return;
    case 'leave':
      for (let i = 0; i < event.count && fleet.members.length > 1; i++)
        fleet.leave((seed + i) % fleet.members.length);
      return;
    case 'reconnect':
      for (let i = 0; i < Math.min(event.count, fleet.members.length); i++)
        fleet.dropStream((seed + i) % fleet.members.length);
      return;
    case 'restart':
      await fleet.kill();
      await apply(fleet, { kind: 'leave', count: event.leave }, seed);
      await fleet.run(event.downMs);
      fleet.restart();
      // Before the Envoys that held assignments have reconnected: the new process knows
      // nothing of what they hold.
      for (let i = 0; i < event.join; i++) fleet.join(demandOf(fleet.members.length + i, seed));
      return;
  }
}

test('random fleets: the rates Envoy computes add up to at most the budget, and each change of rate is seen', async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArb, async ({ envoys, budget, unit, events, seed }) => {
      const perSecond = budget / QUOTA_UNIT_SECONDS[unit];
      const fleet = new EnvoyFleet(
        ruleSet('edge', [
          { bucket: { name: 'api', tenant: '*' }, requests_per_unit: budget, unit },
        ]),
        // Until the first assignment, nothing: the rates are then all the service's.
        { noAssignment: { blanketRule: 'DENY_ALL' } },
        250,
      );
      const stale: number[][] = [];
      const check = (): void => {
        const found = fleet.staleLimiters();
        if (found.length > 0) stale.push(found);
      };
      for (let i = 0; i < envoys; i++) fleet.join(demandOf(i, seed));
      await fleet.run(15_000, check);
      for (const event of events) {
        await apply(fleet, event, seed);
        // Settled: every Envoy has reported (5 s), a restarted process's hold is over (6 s),
        // and the service has ticked; then the rates must add up.
        await fleet.run(15_000, check);
        const rates = fleet.rates();
        const total = rates.reduce((a, b) => a + b, 0);
        expect(total).toBeLessThanOrEqual(perSecond * (1 + 1e-9));
      }
      expect(stale).toEqual([]);
    }),
    { numRuns: 8, seed: 44 },
  );
});
