// One Envoy with the rate_limit_quota filter (rlqs-envoy.ts) against service processes in real
// time: requests for one bucket at a steady rate, the report timer on an interval the test sets
// (Envoy's is 5 s: a test sets a shorter one, and says so), and, like Envoy's cluster of
// replicas, its next stream opened on the next replica once one is lost.
import { EnvoyRlqsClient, type BucketSettings } from './rlqs-envoy';
import { GrpcRlqsTransport, type WireResponse } from './rlqs-wire';

/** One assignment as it arrived: requests a second as Envoy fills them (Infinity, 0 for blankets). */
export interface Received {
  readonly atMs: number;
  readonly perSecond: number;
}

export interface SimEnvoyOptions {
  readonly name: string;
  /** Replicas in the order this Envoy tries them. */
  readonly ports: readonly number[];
  readonly domain: string;
  readonly bucket: Readonly<Record<string, string>>;
  readonly demandPerSecond: number;
  /** The report timer's interval (Envoy's: 5000). */
  readonly reportIntervalMs: number;
  /** Milliseconds since some origin, the same for every Envoy of a test. */
  readonly nowMs: () => number;
  readonly settings?: BucketSettings;
}

function isSameBucket(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** How often requests are generated (each at its own instant within the step). */
const STEP_MS = 10;

export class SimEnvoy {
  readonly client: EnvoyRlqsClient;
  /** Every assignment of its bucket received, in order. */
  readonly received: Received[] = [];
  /** When abandon actions for its bucket arrived. */
  readonly abandoned: number[] = [];
  /** Requests let through per whole second (by nowMs). */
  readonly allowedPerSecond = new Map<number, number>();
  private readonly transport: GrpcRlqsTransport;
  private portIndex = 0;
  private clockMs: number;
  private arrivals = 0;
  private nextTickMs = 0;
  private seen = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SimEnvoyOptions) {
    this.clockMs = options.nowMs();
    this.transport = new GrpcRlqsTransport(() => {
      // A lost stream moves the next one to the next replica, as the cluster's balancer would.
      this.portIndex = this.client.streamEnds.length;
      return options.ports[this.portIndex % options.ports.length] as number;
    });
    this.client = new EnvoyRlqsClient({
      domain: options.domain,
      transport: this.transport,
      nowMs: () => this.clockMs,
      ...(options.settings === undefined ? {} : { settings: options.settings }),
    });
  }

  /** The rate it enforces now; undefined while no assignment is in force. */
  get share(): number | undefined {
    this.client.settle();
    this.take();
    if (this.client.bucket(this.options.bucket)?.action === undefined) return undefined;
    return this.client.rateOf(this.options.bucket);
  }

  /** The replica of its latest stream. */
  get port(): number | undefined {
    return this.transport.opened.at(-1);
  }

  /** Ports of its streams, in order. */
  get connections(): readonly number[] {
    return this.transport.opened;
  }

  start(): void {
    this.clockMs = this.options.nowMs();
    this.nextTickMs = this.clockMs + this.options.reportIntervalMs;
    this.timer = setInterval(() => {
      this.step();
    }, STEP_MS);
  }

  stop(): void {
    clearInterval(this.timer);
    this.client.stop();
    this.transport.close();
  }

  private step(): void {
    const fromMs = this.clockMs;
    const toMs = this.options.nowMs();
    const before = this.arrivals;
    this.arrivals += (this.options.demandPerSecond * (toMs - fromMs)) / 1000;
    // Each request at its own instant, spread over the step as they arrived.
    for (let i = Math.floor(before) + 1; i <= Math.floor(this.arrivals); i++) {
      this.clockMs = fromMs + ((i - before) / (this.arrivals - before)) * (toMs - fromMs);
      if (this.client.request(this.options.bucket)) {
        const second = Math.floor(this.clockMs / 1000);
        this.allowedPerSecond.set(second, (this.allowedPerSecond.get(second) ?? 0) + 1);
      }
    }
    this.clockMs = toMs;
    if (toMs >= this.nextTickMs) {
      this.nextTickMs += this.options.reportIntervalMs;
      this.client.tick();
    }
    this.client.settle();
    this.take();
  }

  /** Records the actions for its bucket among the responses taken since the last look. */
  private take(): void {
    const all = this.client.received;
    for (; this.seen < all.length; this.seen++) {
      const response: WireResponse = all[this.seen] as WireResponse;
      for (const action of response.bucketAction ?? []) {
        if (!isSameBucket(action.bucketId?.bucket ?? {}, this.options.bucket)) continue;
        if (action.abandonAction !== undefined) this.abandoned.push(this.clockMs);
        else this.received.push({ atMs: this.clockMs, perSecond: this.rateIn(action) });
      }
    }
  }

  private rateIn(action: NonNullable<WireResponse['bucketAction']>[number]): number {
    const s = action.quotaAssignmentAction?.rateLimitStrategy;
    if (s?.blanketRule !== undefined) return s.blanketRule === 'DENY_ALL' ? 0 : Infinity;
    const tb = s?.tokenBucket;
    if (tb === undefined) return Infinity;
    return (tb.tokensPerFill?.value ?? 0) / Math.trunc(tb.fillInterval?.seconds ?? 0);
  }
}
