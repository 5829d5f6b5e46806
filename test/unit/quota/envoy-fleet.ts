// A fleet of Envoys as the rate_limit_quota filter behaves (test/helpers/rlqs-envoy.ts, written
// from its source) sharing one bucket, against this process's quota service on one manual
// clock: Envoys join, leave and lose their streams, and the service is killed and restarted.
// Envoy's 5 s report timers (each started by its first bucket, so out of phase) and the
// service's 1 s ticks are driven directly, so minutes pass in milliseconds.
import { ManualClock } from '../../../src/lib/clock';
import type { QuotaRuleSet } from '../../../src/quota';
import {
  EnvoyRlqsClient,
  ENVOY_REPORT_INTERVAL_MS,
  type BucketSettings,
} from '../../helpers/rlqs-envoy';
import { InProcessRlqsTransport, type WireStrategy } from '../../helpers/rlqs-wire';
import { harness, type Harness } from './quota-fakes';

export const BUCKET = { name: 'api', tenant: 'acme' };
const SERVICE_TICK_MS = 1000;
/** Envoy's least fill rate (token_bucket_impl.cc, kMinFillRate): one token a year. */
const ENVOY_MIN_FILL_RATE = 1 / (365 * 24 * 60 * 60);

interface Member {
  readonly client: EnvoyRlqsClient;
  /** Requests a second it receives. */
  demand: number;
  arrivals: number;
  nextTickMs: number;
}

/** The rate Envoy computes for a token bucket (createTokenBucketFromAction, AtomicTokenBucketImpl). */
export function envoyRate(strategy: WireStrategy): number {
  const tb = strategy.tokenBucket ?? {};
  const seconds = Math.trunc((tb.fillInterval?.seconds ?? 0) + (tb.fillInterval?.nanos ?? 0) / 1e9);
  return Math.max(Math.abs((tb.tokensPerFill?.value ?? 0) / seconds), ENVOY_MIN_FILL_RATE);
}

export class EnvoyFleet {
  readonly clock = new ManualClock(1_700_000_000_000);
  private h: Harness;
  /** Killed and not restarted yet: streams opened meanwhile are refused, no tick runs. */
  private isDown = false;
  readonly members: Member[] = [];
  private readonly transport: InProcessRlqsTransport;
  private nextServiceTickMs: number;

  constructor(
    private readonly rules: QuotaRuleSet,
    private readonly settings: BucketSettings = {},
    private readonly stepMs = 10,
  ) {
    this.h = this.newService();
    this.nextServiceTickMs = this.clock.nowMs() + SERVICE_TICK_MS;
    this.transport = new InProcessRlqsTransport(() => this.h.service);
  }

  get service(): Harness['service'] {
    return this.h.service;
  }

  /** Requests let through by every Envoy, those gone included. */
  admitted(): number {
    return this.members.reduce((sum, m) => sum + m.client.admitted, this.admittedByGone);
  }
  private admittedByGone = 0;

  /** A new Envoy whose first request makes the bucket (and starts its 5 s timer). */
  join(demand: number): EnvoyRlqsClient {
    const client = new EnvoyRlqsClient({
      domain: 'edge',
      transport: this.transport,
      nowMs: () => this.clock.nowMs(),
      settings: this.settings,
    });
    // Its 5 s timer starts with its first bucket (createBucketImpl).
    const member = { client, demand, arrivals: 0, nextTickMs: 0 };
    this.members.push(member);
    client.request(BUCKET);
    member.nextTickMs = this.clock.nowMs() + ENVOY_REPORT_INTERVAL_MS;
    return client;
  }

  /** An Envoy shut down: its stream cancelled, no more requests or reports. */
  leave(index: number): void {
    const [member] = this.members.splice(index, 1);
    if (member === undefined) return;
    member.client.stop();
    this.admittedByGone += member.client.admitted;
  }

  /** An Envoy's stream lost (reset): it starts another at its next tick, as Envoy does. */
  dropStream(index: number): void {
    this.members[index]?.client.stop();
  }

  /** The service killed: every stream reset; nothing answers until restart(). */
  async kill(): Promise<void> {
    this.isDown = true;
    await this.h.service.close();
  }

  /** A new process, knowing nothing of the one before. */
  restart(): void {
    this.h = this.newService();
    this.isDown = false;
  }

  /** The rate each Envoy's bucket is let through at now: its live limiter's, 0 or Infinity. */
  rates(): number[] {
    return this.members.map((m) => m.client.rateOf(BUCKET));
  }

  /**
   * Envoys whose live token bucket runs at another rate than the assignment they hold says:
   * a change of rate that Envoy's equality (protoTokenBucketsEq) did not see.
   */
  staleLimiters(): number[] {
    const stale: number[] = [];
    this.members.forEach((m, i) => {
      const cached = m.client.bucket(BUCKET);
      const strategy = cached?.action?.quotaAssignmentAction?.rateLimitStrategy;
      if (strategy?.tokenBucket === undefined || cached?.limiter === undefined) return;
      if (cached.limiter.fillRate !== envoyRate(strategy)) stale.push(i);
    });
    return stale;
  }

  /** Runs `ms` of virtual time in steps; `onStep` sees each. */
  async run(ms: number, onStep?: () => void): Promise<void> {
    const endMs = this.clock.nowMs() + ms;
    while (this.clock.nowMs() < endMs) {
      this.clock.advance(Math.min(this.stepMs, endMs - this.clock.nowMs()));
      const now = this.clock.nowMs();
      for (const m of this.members) {
        m.arrivals += (m.demand * this.stepMs) / 1000;
        for (; m.arrivals >= 1; m.arrivals -= 1) m.client.request(BUCKET);
        if (now >= m.nextTickMs) {
          m.nextTickMs += ENVOY_REPORT_INTERVAL_MS;
          m.client.tick();
        }
      }
      if (now >= this.nextServiceTickMs) {
        this.nextServiceTickMs += SERVICE_TICK_MS;
        if (!this.isDown) await this.h.service.tick();
      }
      onStep?.();
    }
  }

  private newService(): Harness {
    return harness(this.rules, { clock: this.clock, limits: { tickMs: SERVICE_TICK_MS } });
  }
}
