// What operators see of the quota service: each rule with its budget, the buckets it governs,
// the Envoys watching each one with their share and reported demand, and buckets without a rule.
import type { Bucket, Watcher } from './bucket';
import type { QuotaService } from './quota-service';
import type { QuotaStream } from './quota-stream';
import { QUOTA_UNIT_SECONDS, type QuotaRule } from './rules';

/** One Envoy watching a bucket: this replica's (with its stream) or another replica's. */
export interface QuotaEnvoyView {
  readonly id: string;
  readonly isLocal: boolean;
  /** This replica's streams: the peer's address. */
  readonly peer?: string;
  /** Its share now, in the rule's unit; undefined without a budget (blanket rules, no rule). */
  readonly share: number | undefined;
  /** Its reported demand (allowed and denied), in the rule's unit (per second without a rule). */
  readonly demand: number | undefined;
  readonly lastReportAgoMs?: number;
}

export interface QuotaBucketView {
  readonly bucket: Readonly<Record<string, string>>;
  readonly envoys: readonly QuotaEnvoyView[];
}

export interface QuotaRuleView {
  readonly domain: string;
  readonly bucket: string;
  readonly source: string;
  readonly path: string;
  readonly policy: QuotaRule['policy'];
  readonly assignmentTtlMs: number | undefined;
  readonly buckets: readonly QuotaBucketView[];
}

export interface QuotaView {
  readonly replica: string;
  readonly streams: number;
  readonly rules: readonly QuotaRuleView[];
  readonly bucketsWithoutRule: readonly (QuotaBucketView & { readonly domain: string })[];
}

function perUnit(rule: QuotaRule | undefined, perSecond: number | undefined): number | undefined {
  if (perSecond === undefined) return undefined;
  const seconds = rule?.policy.kind === 'budget' ? QUOTA_UNIT_SECONDS[rule.policy.unit] : 1;
  return Math.round(perSecond * seconds * 1000) / 1000;
}

function localEnvoy(
  bucket: Bucket<QuotaStream>,
  watcher: Watcher<QuotaStream>,
  nowMs: number,
): QuotaEnvoyView {
  const stream = watcher.stream;
  return {
    id: stream.id,
    isLocal: true,
    peer: stream.peer,
    share: bucket.shares.get(stream.id),
    demand: perUnit(bucket.rule, watcher.demandPerSecond),
    lastReportAgoMs: nowMs - watcher.lastReportMs,
  };
}

function bucketView(bucket: Bucket<QuotaStream>, nowMs: number): QuotaBucketView {
  const envoys: QuotaEnvoyView[] = [...bucket.watchers.values()].map((w) =>
    localEnvoy(bucket, w, nowMs),
  );
  for (const claim of bucket.remote) {
    envoys.push({
      id: claim.id,
      isLocal: false,
      share: bucket.shares.get(claim.id),
      demand: perUnit(bucket.rule, claim.demandPerSecond),
    });
  }
  return { bucket: Object.fromEntries(bucket.pairs), envoys };
}

/** The service's state as JSON for the debug listener. */
export function quotaView(service: QuotaService): QuotaView {
  const nowMs = service.nowMs();
  const byRule = new Map<QuotaRule, QuotaBucketView[]>();
  const withoutRule: (QuotaBucketView & { domain: string })[] = [];
  for (const bucket of service.allBuckets) {
    const view = bucketView(bucket, nowMs);
    if (bucket.rule === undefined) withoutRule.push({ domain: bucket.domain, ...view });
    else byRule.set(bucket.rule, [...(byRule.get(bucket.rule) ?? []), view]);
  }
  const rules = service.currentRules;
  return {
    replica: service.replicaId,
    streams: service.openStreams.size,
    rules: rules.domains().flatMap((domain) =>
      rules.rulesOf(domain).map((rule) => ({
        domain,
        bucket: rule.id,
        source: rule.source,
        path: rule.path,
        policy: rule.policy,
        assignmentTtlMs: rule.assignmentTtlMs,
        buckets: byRule.get(rule) ?? [],
      })),
    ),
    bucketsWithoutRule: withoutRule,
  };
}
