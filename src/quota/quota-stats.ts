// Statistics of the quota service per domain and bucket rule, through the service's StatsStore.
import { sanitizeStatName, type Counter, type Gauge, type StatsStore } from '../stats';
import { QUOTA_CAPS, type QuotaCap } from './caps';
import type { QuotaRule } from './rules';

/** The scope of every quota statistic. */
export const QUOTA_SCOPE = 'ratelimit.rlqs';

/** `name_api.tenant_*`: a rule's matchers as a statistics path, like a descriptor's stat key. */
export function ruleStatKey(rule: QuotaRule): string {
  return sanitizeStatName(rule.matchers.map((m) => `${m.key}_${m.value}`).join('.'));
}

/** Where the statistics of one rule are kept. */
function ruleScope(rule: QuotaRule): string {
  return `${QUOTA_SCOPE}.${sanitizeStatName(rule.domain)}.${ruleStatKey(rule)}`;
}

/** The handles of one rule. */
export interface RuleQuotaStats {
  /** Bucket usages reported for buckets the rule governs. */
  readonly reports: Counter;
  /** Assignments sent (first ones, pushes and refreshes). */
  readonly assignmentsPushed: Counter;
  /** Abandon actions sent: silent Envoys, and the rule removed by a reload. */
  readonly abandoned: Counter;
  /** Streams (Envoys) of this replica watching a bucket the rule governs. */
  readonly streamsOpen: Gauge;
}

/** The handles of one domain; a domain without rules counts under names made at run time. */
export interface DomainQuotaStats {
  readonly reports: Counter;
  /** Usages of buckets no rule governs (no assignment; Envoy's no_assignment_behavior applies). */
  readonly bucketsWithoutRule: Counter;
  /** Buckets refused because their stream watches RLQS_MAX_BUCKETS_PER_STREAM already. */
  readonly bucketsRefused: Counter;
  /** Configured domains only: a domain sent by a client must not create gauges. */
  readonly streamsOpen: Gauge | undefined;
}

/** Binds and hands out the handles; rules are bound when a configuration arrives. */
export class QuotaStats {
  /** Every open stream, whatever its domain. */
  readonly streamsOpen: Gauge;
  /** Streams ended for a report that breaks the protocol's rules. */
  readonly invalidReports: Counter;
  /** Usages left out of a report (no bucket id, counts past 2^53); the stream goes on. */
  readonly usagesRefused: Counter;
  /** Streams, usages and cached ids each bound refused: `ratelimit.rlqs.refused.<cap>`. */
  readonly refused: Readonly<Record<QuotaCap, Counter>>;
  private readonly rules = new Map<QuotaRule, RuleQuotaStats>();
  private readonly domains = new Map<string, DomainQuotaStats>();
  private configured: ReadonlySet<string> = new Set();

  constructor(private readonly stats: StatsStore) {
    this.streamsOpen = stats.gauge(`${QUOTA_SCOPE}.streams_open`);
    this.invalidReports = stats.counter(`${QUOTA_SCOPE}.invalid_reports`);
    this.usagesRefused = stats.counter(`${QUOTA_SCOPE}.usages_refused`);
    this.refused = Object.fromEntries(
      QUOTA_CAPS.map((cap) => [cap, stats.counter(`${QUOTA_SCOPE}.refused.${cap}`)]),
    ) as Record<QuotaCap, Counter>;
  }

  /** Binds the handles of a new configuration's rules; the domains' are bound on first use. */
  bind(rules: Iterable<QuotaRule>): void {
    this.rules.clear();
    this.domains.clear();
    const configured = new Set<string>();
    for (const rule of rules) {
      configured.add(rule.domain);
      const scope = ruleScope(rule);
      this.rules.set(rule, {
        reports: this.stats.counter(`${scope}.reports`),
        assignmentsPushed: this.stats.counter(`${scope}.assignments_pushed`),
        abandoned: this.stats.counter(`${scope}.abandoned`),
        streamsOpen: this.stats.gauge(`${scope}.streams_open`),
      });
    }
    this.configured = configured;
  }

  rule(rule: QuotaRule): RuleQuotaStats | undefined {
    return this.rules.get(rule);
  }

  /**
   * The abandons of `rule`, bound or not: a reload abandons the buckets of the rules it removed
   * after the new configuration's handles are bound, when the removed rule has none any more.
   */
  abandoned(rule: QuotaRule): Counter {
    return this.rules.get(rule)?.abandoned ?? this.stats.counter(`${ruleScope(rule)}.abandoned`);
  }

  domain(domain: string): DomainQuotaStats {
    let found = this.domains.get(domain);
    if (found === undefined) {
      const scope = `${QUOTA_SCOPE}.${sanitizeStatName(domain)}`;
      const isConfigured = this.configured.has(domain);
      const counter = (name: string): Counter =>
        isConfigured
          ? this.stats.counter(`${scope}.${name}`)
          : this.stats.runtimeCounter(`${scope}.${name}`);
      found = {
        reports: counter('reports'),
        bucketsWithoutRule: counter('buckets_without_rule'),
        bucketsRefused: counter('buckets_refused'),
        streamsOpen: isConfigured ? this.stats.gauge(`${scope}.streams_open`) : undefined,
      };
      // A domain a client made up is not kept: clients must not grow this map.
      if (isConfigured) this.domains.set(domain, found);
    }
    return found;
  }
}
