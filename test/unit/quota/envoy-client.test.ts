// Envoys as the rate_limit_quota filter behaves (test/helpers/rlqs-envoy.ts, written from its
// source) against the quota service of this process, on one manual clock: Envoy's 5 s ticks
// and the service's 1 s ticks are driven directly, so minutes pass in milliseconds.
import { ManualClock } from '../../../src/lib/clock';
import {
  EnvoyRlqsClient,
  ENVOY_REPORT_INTERVAL_MS,
  type BucketSettings,
} from '../../helpers/rlqs-envoy';
import {
  InProcessRlqsTransport,
  type RlqsCall,
  type RlqsHandlers,
  type RlqsTransport,
  type WireResponse,
} from '../../helpers/rlqs-wire';
import { harness, ruleSet } from './quota-fakes';

const BUCKET = { name: 'api', tenant: 'acme' };
const SERVICE_TICK_MS = 1000;
const STEP_MS = 10;

const budget = (perSecond: number) =>
  ruleSet('edge', [
    { bucket: { name: 'api', tenant: '*' }, requests_per_unit: perSecond, unit: 'second' },
  ]);

/** Envoys with steady demand for BUCKET, their report timers out of phase, and one service. */
class Fleet {
  readonly clock = new ManualClock(1_700_000_000_000);
  h: ReturnType<typeof harness>;
  readonly envoys: {
    client: EnvoyRlqsClient;
    demand: number;
    arrivals: number;
    nextTickMs: number;
  }[];
  /** Requests let through in each 5 s window since the start. */
  readonly windows: number[] = [];
  private readonly startMs: number;
  private nextServiceTickMs: number;

  constructor(
    rules: ReturnType<typeof budget>,
    demands: readonly number[],
    settings?: BucketSettings,
  ) {
    this.h = harness(rules, { clock: this.clock, limits: { tickMs: SERVICE_TICK_MS } });
    this.startMs = this.clock.nowMs();
    this.nextServiceTickMs = this.startMs + SERVICE_TICK_MS;
    const transport = new InProcessRlqsTransport(() => this.h.service);
    this.envoys = demands.map((demand, i) => ({
      client: new EnvoyRlqsClient({
        domain: 'edge',
        transport,
        nowMs: () => this.clock.nowMs(),
        ...(settings === undefined ? {} : { settings }),
      }),
      demand,
      arrivals: 0,
      // Each Envoy's timer starts with its first bucket: they tick out of phase.
      nextTickMs: this.startMs + ENVOY_REPORT_INTERVAL_MS + i * 1370,
    }));
  }

  get admitted(): number {
    return this.envoys.reduce((sum, e) => sum + e.client.admitted, 0);
  }

  /** Runs `ms` of virtual time. */
  async run(ms: number): Promise<void> {
    const endMs = this.clock.nowMs() + ms;
    while (this.clock.nowMs() < endMs) {
      const before = this.admitted;
      this.clock.advance(STEP_MS);
      const now = this.clock.nowMs();
      for (const e of this.envoys) {
        e.arrivals += (e.demand * STEP_MS) / 1000;
        for (; e.arrivals >= 1; e.arrivals -= 1) e.client.request(BUCKET);
        if (now >= e.nextTickMs) {
          e.nextTickMs += ENVOY_REPORT_INTERVAL_MS;
          e.client.tick();
        }
      }
      if (now >= this.nextServiceTickMs) {
        this.nextServiceTickMs += SERVICE_TICK_MS;
        await this.h.service.tick();
      }
      const window = Math.floor((now - this.startMs - 1) / 5000);
      this.windows[window] = (this.windows[window] ?? 0) + this.admitted - before;
    }
  }
}

test('a budget of 10/s split over 3 Envoys admits at most 10.5/s in total', async () => {
  const fleet = new Fleet(budget(10), [10, 10, 10]);
  await fleet.run(120_000);
  // 120 s at 10 a second, the first request of each Envoy and its first full bucket included.
  expect(fleet.admitted / 120).toBeLessThanOrEqual(10.5);
  expect(fleet.admitted / 120).toBeGreaterThanOrEqual(9.5);
  for (const admitted of fleet.windows.slice(1)) expect(admitted).toBeLessThanOrEqual(52.5);
  // Each Envoy holds a token bucket it fills at a third of the budget, in whole seconds.
  for (const e of fleet.envoys) expect(e.client.rateOf(BUCKET)).toBeCloseTo(10 / 3, 1);
  for (const e of fleet.envoys) expect(e.client.streamEnds).toEqual([]);
});

test("Envoy's reports: 0 s for a new bucket at once, then every bucket on each tick in whole seconds", () => {
  const fleet = new Fleet(budget(100), [0]);
  const [envoy] = fleet.envoys;
  const client = envoy!.client;
  fleet.clock.advance(300);
  expect(client.request(BUCKET)).toBe(true);
  expect(client.sent).toEqual([
    {
      domain: 'edge',
      bucketQuotaUsages: [
        {
          bucketId: { bucket: BUCKET },
          timeElapsed: { seconds: 0 },
          numRequestsAllowed: 1,
          numRequestsDenied: 0,
        },
      ],
    },
  ]);
  client.settle();
  expect(client.rateOf(BUCKET)).toBe(100);
  // A second bucket, idle after its first request: reported on every tick all the same.
  client.request({ name: 'api', tenant: 'idle' });
  fleet.clock.advance(2700);
  client.request(BUCKET);
  envoy!.nextTickMs = Infinity;
  fleet.clock.advance(2000);
  client.tick();
  const tick = client.sent.at(-1);
  expect(
    tick?.bucketQuotaUsages?.map((u) => [
      u.bucketId?.bucket?.tenant,
      u.timeElapsed,
      u.numRequestsAllowed,
    ]),
  ).toEqual([
    ['acme', { seconds: 4 }, 1],
    ['idle', { seconds: 4 }, 0],
  ]);
  expect(client.streamEnds).toEqual([]);
});

test('after an abandon, the empty reports of each tick keep the stream, and a new request watches again', async () => {
  const fleet = new Fleet(budget(100), [5]);
  await fleet.run(6000);
  const client = fleet.envoys[0]!.client;
  fleet.h.service.setRules(
    ruleSet('edge', [{ bucket: { name: 'other' }, blanket_rule: 'deny_all' }]),
  );
  fleet.envoys[0]!.demand = 0;
  await fleet.run(11_000);
  expect(client.bucket(BUCKET)).toBeUndefined();
  expect(client.sent.slice(-2)).toEqual([
    { domain: 'edge', bucketQuotaUsages: [] },
    { domain: 'edge', bucketQuotaUsages: [] },
  ]);
  expect(client.streamEnds).toEqual([]);
  fleet.h.service.setRules(budget(100));
  client.request(BUCKET);
  expect(client.sent.at(-1)?.bucketQuotaUsages?.[0]?.timeElapsed).toEqual({ seconds: 0 });
  client.settle();
  expect(client.rateOf(BUCKET)).toBe(100);
});

/** A server that answers each report with one scripted response, for the client's own rules. */
class ScriptedTransport implements RlqsTransport {
  handlers: RlqsHandlers | undefined;
  opened = 0;
  open(handlers: RlqsHandlers): RlqsCall {
    this.opened += 1;
    this.handlers = handlers;
    return { send: () => undefined, cancel: () => undefined };
  }
  answer(response: WireResponse): void {
    this.handlers?.onMessage(response);
  }
}

test('the client applies what Envoy applies: no requests_per_time_unit, TTL seconds, expiry in two steps', () => {
  const clock = new ManualClock(0);
  const transport = new ScriptedTransport();
  const client = new EnvoyRlqsClient({
    domain: 'edge',
    transport,
    nowMs: () => clock.nowMs(),
    settings: {
      noAssignment: { blanketRule: 'DENY_ALL' },
      expired: { fallback: { blanketRule: 'ALLOW_ALL' }, timeoutSeconds: 15 },
    },
  });
  expect(client.request(BUCKET)).toBe(false);
  const assign = (strategy: object, ttl: object): WireResponse => ({
    bucketAction: [
      {
        bucketId: { bucket: BUCKET },
        quotaAssignmentAction: { assignmentTimeToLive: ttl, rateLimitStrategy: strategy },
      },
    ],
  });
  // requests_per_time_unit: skipped, DENY_ALL (no_assignment_behavior) stays.
  transport.answer(
    assign(
      { requestsPerTimeUnit: { requestsPerTimeUnit: 100, timeUnit: 'SECOND' } },
      { seconds: 60 },
    ),
  );
  expect(client.request(BUCKET)).toBe(false);
  // A fill interval under a second is 0 s to Envoy: an infinite rate.
  transport.answer(
    assign(
      {
        tokenBucket: {
          maxTokens: 1,
          tokensPerFill: { value: 1 },
          fillInterval: { nanos: 100_000_000 },
        },
      },
      { seconds: 2, nanos: 900_000_000 },
    ),
  );
  clock.advance(1);
  expect(client.rateOf(BUCKET)).toBe(Infinity);
  // Only the TTL's seconds count: expired after 2 s, to the expired fallback for 15 s...
  clock.advance(2000);
  expect(client.bucket(BUCKET)?.action?.quotaAssignmentAction?.rateLimitStrategy).toEqual({
    blanketRule: 'ALLOW_ALL',
  });
  expect(client.request(BUCKET)).toBe(true);
  // ...then to no_assignment_behavior.
  clock.advance(15_000);
  expect(client.request(BUCKET)).toBe(false);
  expect(client.bucket(BUCKET)?.action).toBeUndefined();
});

test('a service killed and restarted: Envoys reconnect at their next tick and the budget holds', async () => {
  const fleet = new Fleet(budget(30), [10, 20, 40]);
  await fleet.run(30_000);
  // SIGKILL: every stream reset, and nothing answers for 2 s; then a new process, knowing nothing.
  await fleet.h.service.close();
  await fleet.run(2000);
  fleet.h = harness(budget(30), { clock: fleet.clock, limits: { tickMs: SERVICE_TICK_MS } });
  await fleet.run(60_000);
  for (const e of fleet.envoys) {
    // Lost once, and started again at ticks only: one more stream per tick that found no service.
    expect(e.client.streamEnds[0]?.details).toBe('the server is shutting down');
    expect(e.client.streamsStarted).toBe(1 + e.client.streamEnds.length);
    expect(e.client.streamEnds.length).toBeLessThanOrEqual(2);
  }
  for (const admitted of fleet.windows.slice(1))
    expect(admitted).toBeLessThanOrEqual(30 * 5 * 1.05);
});

test('a new bucket every 0.5 s: each is assigned at once, and a deny_all rule denies from the first answer', async () => {
  const fleet = new Fleet(
    ruleSet('edge', [
      {
        bucket: { name: 'api', tenant: '*' },
        requests_per_unit: 100,
        unit: 'second',
        assignment_ttl: '20500ms',
      },
      { bucket: { name: 'blocked' }, blanket_rule: 'deny_all' },
    ]),
    [0],
  );
  const client = fleet.envoys[0]!.client;
  expect(client.request({ name: 'blocked' })).toBe(true); // no_assignment_behavior: ALLOW_ALL
  client.settle();
  expect(client.request({ name: 'blocked' })).toBe(false);
  for (let i = 0; i < 40; i++) {
    client.request({ name: 'api', tenant: `t${i}` });
    await fleet.run(500);
    // Assigned with the TTL rounded up to whole seconds (Envoy reads only the seconds).
    const action = client.bucket({ name: 'api', tenant: `t${i}` })?.action;
    const ttl = action?.quotaAssignmentAction?.assignmentTimeToLive;
    expect([ttl?.seconds, ttl?.nanos ?? 0]).toEqual([21, 0]);
  }
  expect(client.streamEnds).toEqual([]);
});

// onActionExpirationTimer and onQuotaResponseImpl run on Envoy's main dispatcher in the order
// they fall due (global_client_impl.cc): an assignment whose TTL ran out before the next
// response arrived has already reverted the bucket to no_assignment_behavior and dropped its
// token bucket, so the response makes a new one, full (createTokenBucketFromAction without an
// existing bucket), even when it is equal to the one that expired.
test('a response that arrives after the assignment expired makes a new, full bucket', () => {
  const clock = new ManualClock(0);
  const transport = new ScriptedTransport();
  const client = new EnvoyRlqsClient({ domain: 'edge', transport, nowMs: () => clock.nowMs() });
  client.request(BUCKET);
  const assign: WireResponse = {
    bucketAction: [
      {
        bucketId: { bucket: BUCKET },
        quotaAssignmentAction: {
          assignmentTimeToLive: { seconds: 2 },
          rateLimitStrategy: {
            tokenBucket: {
              maxTokens: 5,
              tokensPerFill: { value: 1 },
              fillInterval: { seconds: 1 },
            },
          },
        },
      },
    ],
  };
  transport.answer(assign);
  let admitted = 0;
  for (let i = 0; i < 10; i++) if (client.request(BUCKET)) admitted += 1;
  expect(admitted).toBe(5);
  // The TTL runs out at 2 s; the same assignment arrives at 2.5 s, before the client is used.
  clock.advance(2500);
  transport.answer(assign);
  admitted = 0;
  for (let i = 0; i < 10; i++) if (client.request(BUCKET)) admitted += 1;
  // Expired first, then a new bucket of 5: not the old one's 2.5 tokens refilled since.
  expect(admitted).toBe(5);
});

// createTokenBucketFromAction divides tokens_per_fill by ToInt64Seconds(fill_interval): 0 s is
// an infinite rate. AtomicTokenBucketImpl (token_bucket_impl.h) then starts at the instant it
// is made and counts (now - then) × rate tokens: 0 × infinity is NaN, and std::min(max_tokens,
// NaN) is max_tokens, so even requests at that very instant find a full bucket.
test('a 0-second fill interval lets every request through, at the instant it arrives too', () => {
  const clock = new ManualClock(0);
  const transport = new ScriptedTransport();
  const client = new EnvoyRlqsClient({
    domain: 'edge',
    transport,
    nowMs: () => clock.nowMs(),
    settings: { noAssignment: { blanketRule: 'DENY_ALL' } },
  });
  expect(client.request(BUCKET)).toBe(false);
  transport.answer({
    bucketAction: [
      {
        bucketId: { bucket: BUCKET },
        quotaAssignmentAction: {
          assignmentTimeToLive: { seconds: 60 },
          rateLimitStrategy: {
            tokenBucket: { maxTokens: 2, tokensPerFill: { value: 1 }, fillInterval: {} },
          },
        },
      },
    ],
  });
  for (let i = 0; i < 100; i++) expect(client.request(BUCKET)).toBe(true);
  clock.advance(0.5);
  for (let i = 0; i < 100; i++) expect(client.request(BUCKET)).toBe(true);
  expect(client.rateOf(BUCKET)).toBe(Infinity);
});
