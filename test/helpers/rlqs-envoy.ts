// A simulated Envoy with the rate_limit_quota filter: requests arrive at a steady rate, are let
// through by a local token bucket the service's assignment sets (denied before the first one,
// as no_assignment_behavior DENY_ALL), reported every interval on one stream, and the stream is
// reopened on the next replica when it breaks.
import * as grpc from '@grpc/grpc-js';
import { loadApi } from '../../src/lib/proto';

const RLQS = 'envoy/service/rate_limit_quota/v3/rlqs.proto';

interface Strategy {
  readonly strategy?: string;
  readonly blanketRule?: string;
  readonly requestsPerTimeUnit?: {
    readonly requestsPerTimeUnit?: number;
    readonly timeUnit?: string;
  };
}

/** A RateLimitQuotaResponse as proto-loader decodes it. */
interface WireResponse {
  readonly bucketAction?: readonly {
    readonly bucketAction?: string;
    readonly quotaAssignmentAction?: { readonly rateLimitStrategy?: Strategy };
  }[];
}

type QuotaStream = grpc.ClientDuplexStream<unknown, WireResponse>;
interface QuotaStub extends grpc.Client {
  StreamRateLimitQuotas(): QuotaStream;
}

let stubClass:
  | (new (
      address: string,
      creds: grpc.ChannelCredentials,
      options: grpc.ClientOptions,
    ) => QuotaStub)
  | undefined;

function stubOf(port: number): QuotaStub {
  if (stubClass === undefined) {
    const api = loadApi([RLQS]) as unknown as {
      envoy: { service: { rate_limit_quota: { v3: { RateLimitQuotaService: typeof stubClass } } } };
    };
    stubClass = api.envoy.service.rate_limit_quota.v3.RateLimitQuotaService;
  }
  if (stubClass === undefined) throw new Error('no RateLimitQuotaService in api/');
  // Each Envoy its own connection, as separate Envoys have.
  return new stubClass(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  });
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { SECOND: 1, MINUTE: 60, HOUR: 3600 };

/** One assignment as it arrived: requests a second (Infinity for allow all, 0 deny all). */
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
  readonly reportIntervalMs: number;
  /** Milliseconds since some origin, the same for every Envoy of a test. */
  readonly nowMs: () => number;
}

const TICK_MS = 20;

export class SimEnvoy {
  /** Every assignment received, in order. */
  readonly received: Received[] = [];
  /** When abandon actions arrived. */
  readonly abandoned: number[] = [];
  /** Requests let through per whole second (by nowMs). */
  readonly allowedPerSecond = new Map<number, number>();
  /** Ports of the replicas this Envoy has had streams on, in order. */
  readonly connections: number[] = [];
  private perSecond: number | undefined;
  private tokens = 0;
  private arrivals = 0;
  private allowed = 0;
  private denied = 0;
  private lastTickMs: number;
  private lastReportMs: number;
  private isSubscribed = false;
  private portIndex = 0;
  private stub: QuotaStub | undefined;
  private stream: QuotaStream | undefined;
  private timers: NodeJS.Timeout[] = [];
  private isStopped = false;

  constructor(private readonly options: SimEnvoyOptions) {
    this.lastTickMs = options.nowMs();
    this.lastReportMs = this.lastTickMs;
  }

  /** The share it enforces now, requests a second; undefined before the first assignment. */
  get share(): number | undefined {
    return this.perSecond;
  }

  /** The replica it streams to now. */
  get port(): number | undefined {
    return this.connections.at(-1);
  }

  start(): void {
    this.connect();
    this.timers.push(
      setInterval(() => {
        this.tick();
      }, TICK_MS),
    );
    this.timers.push(
      setInterval(() => {
        this.report();
      }, this.options.reportIntervalMs),
    );
  }

  stop(): void {
    this.isStopped = true;
    for (const t of this.timers) clearInterval(t);
    this.stream?.cancel();
    this.stub?.close();
  }

  private connect(): void {
    if (this.isStopped) return;
    const port = this.options.ports[this.portIndex % this.options.ports.length] as number;
    this.stub?.close();
    const stub = stubOf(port);
    const stream = stub.StreamRateLimitQuotas();
    this.stub = stub;
    this.stream = stream;
    this.connections.push(port);
    stream.on('data', (message: WireResponse) => {
      this.take(message);
    });
    let isOver = false;
    const reconnect = (): void => {
      if (isOver || this.isStopped) return;
      isOver = true;
      // Envoy keeps its assignment meanwhile and reopens the stream on the next endpoint.
      this.portIndex += 1;
      this.isSubscribed = false;
      this.timers.push(
        setTimeout(() => {
          this.connect();
        }, 50),
      );
    };
    stream.on('error', reconnect);
    stream.on('end', reconnect);
    this.subscribe();
  }

  /** The first report of the bucket on a stream: a watch. */
  private subscribe(): void {
    this.isSubscribed = true;
    this.send(1);
  }

  private take(message: WireResponse): void {
    for (const action of message.bucketAction ?? []) {
      if (action.bucketAction === 'abandonAction') {
        this.abandoned.push(this.options.nowMs());
        this.perSecond = undefined;
        this.tokens = 0;
        this.isSubscribed = false;
        continue;
      }
      const strategy = action.quotaAssignmentAction?.rateLimitStrategy;
      const perSecond = this.rateOf(strategy);
      this.perSecond = perSecond;
      // A new bucket size: what was saved is kept, within it.
      this.tokens = Math.min(this.tokens, perSecond === Infinity ? 0 : perSecond);
      this.received.push({ atMs: this.options.nowMs(), perSecond });
    }
  }

  private rateOf(strategy: Strategy | undefined): number {
    if (strategy?.strategy === 'blanketRule')
      return strategy.blanketRule === 'DENY_ALL' ? 0 : Infinity;
    const rate = strategy?.requestsPerTimeUnit;
    if (rate === undefined) return Infinity;
    return (rate.requestsPerTimeUnit ?? 0) / (UNIT_SECONDS[rate.timeUnit ?? 'SECOND'] ?? 1);
  }

  private tick(): void {
    const now = this.options.nowMs();
    const elapsedMs = now - this.lastTickMs;
    this.lastTickMs = now;
    this.arrivals += (this.options.demandPerSecond * elapsedMs) / 1000;
    const rate = this.perSecond;
    if (rate !== undefined && rate !== Infinity)
      this.tokens = Math.min(rate, this.tokens + (rate * elapsedMs) / 1000);
    let allowedNow = 0;
    for (; this.arrivals >= 1; this.arrivals -= 1) {
      if (rate === Infinity || (rate !== undefined && this.tokens >= 1)) {
        allowedNow += 1;
        if (rate !== Infinity) this.tokens -= 1;
      } else this.denied += 1;
    }
    this.allowed += allowedNow;
    this.count(now - elapsedMs, now, allowedNow);
    // An abandoned bucket is watched again by the next request, as Envoy does.
    if (!this.isSubscribed && this.stream !== undefined && allowedNow + this.denied > 0)
      this.subscribe();
  }

  /**
   * Spreads a tick's requests over the seconds it covers, in proportion: a tick the event loop
   * ran late must not move requests from one second into the next.
   */
  private count(fromMs: number, toMs: number, allowed: number): void {
    const span = Math.max(toMs - fromMs, 1e-9);
    for (let second = Math.floor(fromMs / 1000); second * 1000 < toMs; second++) {
      const part = Math.min(toMs, (second + 1) * 1000) - Math.max(fromMs, second * 1000);
      const share = (allowed * part) / span;
      this.allowedPerSecond.set(second, (this.allowedPerSecond.get(second) ?? 0) + share);
    }
  }

  private report(): void {
    if (this.isSubscribed) this.send(this.options.nowMs() - this.lastReportMs);
  }

  private send(elapsedMs: number): void {
    const ms = Math.max(1, elapsedMs);
    this.stream?.write({
      domain: this.options.domain,
      bucketQuotaUsages: [
        {
          bucketId: { bucket: this.options.bucket },
          timeElapsed: { seconds: Math.floor(ms / 1000), nanos: Math.round((ms % 1000) * 1e6) },
          numRequestsAllowed: this.allowed,
          numRequestsDenied: this.denied,
        },
      ],
    });
    this.lastReportMs = this.options.nowMs();
    this.allowed = 0;
    this.denied = 0;
  }
}
