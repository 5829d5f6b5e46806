// Fakes for the quota service's tests: a transport that records what it is sent, reports as
// Envoy's filter builds them, rule sets from plain items, and a demand hub for replicas.
import { ManualClock } from '../../../src/lib/clock';
import { silentLogger, type Logger } from '../../../src/lib/logger';
import {
  MemoryDemandShare,
  mergeQuotaRules,
  parseQuotaBuckets,
  QuotaService,
  QuotaStats,
  type BucketAction,
  type QuotaDemandShare,
  type QuotaLimits,
  type QuotaRuleSet,
  type QuotaStatus,
  type QuotaStreamSink,
  type RemoteClaim,
  type WireUsageReports,
} from '../../../src/quota';
import { StatsStore } from '../../../src/stats';

/** A transport that keeps every response and the ending; `isReading` false holds sends back. */
export class RecordingSink implements QuotaStreamSink {
  readonly responses: (readonly BucketAction[])[] = [];
  ended: { status: QuotaStatus; message: string } | undefined;
  isReading = true;

  send(actions: readonly BucketAction[]): void {
    if (this.ended !== undefined) throw new Error('sent after the end');
    this.responses.push(actions);
  }

  end(status: QuotaStatus, message: string): void {
    if (this.ended !== undefined) throw new Error('ended twice');
    this.ended = { status, message };
  }

  canSend(): boolean {
    return this.isReading;
  }

  /** Every action sent, in order. */
  get actions(): BucketAction[] {
    return this.responses.flat();
  }

  /** The last action for the bucket with these pairs. */
  last(bucket: Record<string, string>): BucketAction | undefined {
    const key = JSON.stringify(Object.entries(bucket).sort());
    return this.actions.filter((a) => JSON.stringify([...a.bucket].sort()) === key).at(-1);
  }

  /** The share the Envoy holds for a bucket (a token bucket's per second), 0 after abandon or DENY_ALL. */
  held(bucket: Record<string, string>): number | undefined {
    const action = this.last(bucket);
    if (action === undefined) return undefined;
    if (action.kind === 'abandon') return 0;
    const s = action.strategy;
    if (s.kind === 'blanket') return s.rule === 'DENY_ALL' ? 0 : Infinity;
    // As Envoy computes it: tokens_per_fill / ToInt64Seconds(fill_interval).
    return s.tokensPerFill / s.fillSeconds;
  }
}

/** One bucket's usage as the filter reports it. */
export interface Usage {
  readonly bucket: Record<string, string>;
  readonly elapsedMs: number;
  readonly allowed?: number;
  readonly denied?: number;
}

export function reports(domain: string, usages: readonly Usage[]): WireUsageReports {
  return {
    domain,
    bucketQuotaUsages: usages.map((u) => ({
      bucketId: { bucket: u.bucket },
      timeElapsed: { seconds: Math.floor(u.elapsedMs / 1000), nanos: (u.elapsedMs % 1000) * 1e6 },
      numRequestsAllowed: u.allowed ?? 0,
      numRequestsDenied: u.denied ?? 0,
    })),
  };
}

/** The rule set of one domain's items, as a file would give them. */
export function ruleSet(domain: string, items: unknown[]): QuotaRuleSet {
  const parsed = parseQuotaBuckets(items, { domain, source: `${domain}.yaml` });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const merged = mergeQuotaRules(parsed.rules);
  if (!merged.ok) throw new Error('duplicate buckets');
  return merged.set;
}

export const LIMITS: QuotaLimits = {
  maxBucketsPerStream: 100,
  maxStreams: 1000,
  maxBuckets: 100_000,
  maxBucketsWithoutRule: 10_000,
  maxBucketIdBytes: 1024,
  maxBucketIdBytesTotal: 32 * 1024 * 1024,
  maxStreamsPerConnection: 10,
  tickMs: 100,
  shareTtlMs: 1000,
};

export interface Harness {
  readonly clock: ManualClock;
  readonly stats: StatsStore;
  readonly service: QuotaService;
}

export function harness(
  rules: QuotaRuleSet,
  options: {
    share?: QuotaDemandShare;
    limits?: Partial<QuotaLimits>;
    clock?: ManualClock;
    logger?: Logger;
  } = {},
): Harness {
  const clock = options.clock ?? new ManualClock(1_700_000_000_000);
  const stats = new StatsStore();
  const service = new QuotaService({
    clock,
    share: options.share ?? new MemoryDemandShare('r1'),
    limits: { ...LIMITS, ...options.limits },
    logger: options.logger ?? silentLogger,
    stats: new QuotaStats(stats),
  });
  service.setRules(rules);
  return { clock, stats, service };
}

/** Lets queued microtasks (flushes after a stream ends) run. */
export async function settle(): Promise<void> {
  await Promise.resolve();
  await Promise.resolve();
}

/** Replicas' demand in one place, each replica's entry dated, as Redis holds it. */
export class DemandHub {
  private readonly entries = new Map<
    string,
    Map<string, { claims: readonly RemoteClaim[]; expiresMs: number }>
  >();

  constructor(
    private readonly clock: ManualClock,
    private readonly ttlMs: number,
  ) {}

  share(replicaId: string): QuotaDemandShare & { isDown: boolean } {
    const share = {
      replicaId,
      isDown: false,
      exchange: (local: ReadonlyMap<string, readonly RemoteClaim[]>) =>
        share.isDown
          ? Promise.reject(new Error('unreachable'))
          : Promise.resolve(this.exchange(replicaId, local)),
      close: () => Promise.resolve(),
    };
    return share;
  }

  private exchange(
    replica: string,
    local: ReadonlyMap<string, readonly RemoteClaim[]>,
  ): Map<string, RemoteClaim[]> {
    const now = this.clock.nowMs();
    const out = new Map<string, RemoteClaim[]>();
    for (const [bucket, claims] of local) {
      const entry = this.entries.get(bucket) ?? new Map();
      this.entries.set(bucket, entry);
      if (claims.length === 0) entry.delete(replica);
      else entry.set(replica, { claims, expiresMs: now + this.ttlMs });
      const others: RemoteClaim[] = [];
      for (const [id, value] of entry) {
        if (value.expiresMs < now) entry.delete(id);
        else if (id !== replica) others.push(...value.claims);
      }
      if (others.length > 0) out.set(bucket, others);
    }
    return out;
  }
}
