// Simulated Envoys enforcing their assignments against one or two replicas on a manual clock:
// the budget holds after every event, shares converge, and a dead replica's share comes back.
import fc from 'fast-check';
import { ManualClock } from '../../../src/lib/clock';
import { fairShares, type QuotaService } from '../../../src/quota';
import { DemandHub, harness, RecordingSink, reports, ruleSet, settle } from './quota-fakes';

const BUCKET = { name: 'api' };
// Envoy reports every 5 s (filter_persistence.cc), in whole seconds.
const INTERVAL_MS = 5000;

/** An Envoy with a steady demand that lets through what its assignment allows. */
class SimEnvoy {
  sink = new RecordingSink();
  stream: ReturnType<QuotaService['openStream']>;

  constructor(
    service: QuotaService,
    readonly demandPerSecond: number,
  ) {
    this.stream = service.openStream(this.sink, 'sim');
    this.stream.receive(reports('edge', [{ bucket: BUCKET, elapsedMs: 0, allowed: 0 }]));
  }

  /** Requests it wants each interval. */
  get wanted(): number {
    return Math.round((this.demandPerSecond * INTERVAL_MS) / 1000);
  }

  /** The demand the service can see: whole requests per interval, as a rate. */
  get measuredDemand(): number {
    return (this.wanted * 1000) / INTERVAL_MS;
  }

  get held(): number {
    return this.sink.held(BUCKET) ?? 0;
  }

  /** One reporting interval of its demand, cut to its assignment. */
  report(): void {
    const wanted = this.wanted;
    const allowed = Math.min(wanted, Math.floor((this.held * INTERVAL_MS) / 1000));
    this.stream.receive(
      reports('edge', [
        { bucket: BUCKET, elapsedMs: INTERVAL_MS, allowed, denied: wanted - allowed },
      ]),
    );
  }

  reconnect(service: QuotaService): void {
    this.stream.closed();
    this.sink = new RecordingSink();
    this.stream = service.openStream(this.sink, 'sim');
    this.stream.receive(reports('edge', [{ bucket: BUCKET, elapsedMs: 0, allowed: 0 }]));
  }
}

const rules = (budget: number) =>
  ruleSet('edge', [{ bucket: { name: '*' }, requests_per_unit: budget, unit: 'second' }]);

function heldTotal(envoys: readonly SimEnvoy[]): number {
  return envoys.reduce((sum, e) => sum + e.held, 0);
}

function expectFair(envoys: readonly SimEnvoy[], budget: number): void {
  const fair = fairShares(
    budget,
    envoys.map((e, i) => ({ id: String(i), demand: e.measuredDemand })),
  );
  envoys.forEach((e, i) => {
    const want = fair.get(String(i)) ?? 0;
    expect([i, Math.abs(e.held - want) <= Math.max(0.1 * want, 1)]).toEqual([i, true]);
  });
}

test('the skewed fleet 1:2:4:8:16 converges within two reporting intervals', async () => {
  const h = harness(rules(150));
  const fleet = [10, 20, 40, 80, 160].map((d) => new SimEnvoy(h.service, d));
  expect(fleet.map((e) => e.held)).toEqual([30, 30, 30, 30, 30]);
  for (let round = 0; round < 2; round++) {
    h.clock.advance(INTERVAL_MS);
    for (const e of fleet) {
      e.report();
      expect(heldTotal(fleet)).toBeLessThanOrEqual(150 + 1e-9);
    }
    await h.service.tick();
  }
  expectFair(fleet, 150);
});

test('property: the budget holds after every event, and steady demand converges in two rounds', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 500 }),
      fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 4 }),
      async (budget, demands, leavers) => {
        const h = harness(rules(budget));
        const fleet = demands.map((d) => new SimEnvoy(h.service, d));
        const check = (): void => {
          expect(heldTotal(fleet)).toBeLessThanOrEqual(budget + 1e-9);
        };
        check();
        // Some leave at once, the others run two rounds of steady demand.
        for (const index of leavers) {
          if (fleet.length <= 1) break;
          const [gone] = fleet.splice(index % fleet.length, 1);
          gone?.stream.closed();
          await settle();
          check();
        }
        for (let round = 0; round < 2; round++) {
          h.clock.advance(INTERVAL_MS);
          for (const e of fleet) {
            e.report();
            check();
          }
          await h.service.tick();
          check();
        }
        expectFair(fleet, budget);
      },
    ),
    { numRuns: 60 },
  );
});

test('two replicas share one budget, and a dead replica returns its share once its entry expires', async () => {
  const clock = new ManualClock(1_700_000_000_000);
  const hub = new DemandHub(clock, 1000);
  const shareA = hub.share('A');
  const a = harness(rules(150), { clock, share: shareA });
  const b = harness(rules(150), { clock, share: hub.share('B') });
  const onA = [10, 40, 160].map((d) => new SimEnvoy(a.service, d));
  const onB = [20, 80].map((d) => new SimEnvoy(b.service, d));
  const fleet = [...onA, ...onB];
  const round = async (services: QuotaService[], envoys: SimEnvoy[]): Promise<void> => {
    clock.advance(INTERVAL_MS);
    for (const e of envoys) e.report();
    for (const s of services) await s.tick();
    for (const s of services) await s.tick();
  };
  for (let i = 0; i < 3; i++) {
    await round([a.service, b.service], fleet);
    expect(heldTotal(fleet)).toBeLessThanOrEqual(150 + fleet.length);
  }
  expectFair(fleet, 150);

  // A dies without a word: its Envoys reconnect to B, while A's entry still counts there.
  shareA.isDown = true;
  for (const e of onA) e.reconnect(b.service);
  expect(heldTotal(fleet)).toBeLessThanOrEqual(150 + fleet.length);
  for (let i = 0; i < 6; i++) await round([b.service], fleet);
  expectFair(fleet, 150);
  expect(heldTotal(fleet)).toBe(150);
});
