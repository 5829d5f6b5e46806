// The xDS client's status as statistics: connected, ACKs and NACKs, their versions, and the age
// of the last accepted update.
import { STAT, type XdsVersionStat } from './names';
import type { StatsStore } from './store';

/**
 * What the xDS client reports of its management server: whether a stream is open and has
 * been answered, and the ACKs and NACKs it sent (of every subscribed type). Times are Unix ms.
 */
export interface XdsStatus {
  readonly server: string;
  readonly isConnected: boolean;
  /** ACK requests sent since start. */
  readonly acks: number;
  /** NACK requests sent since start. */
  readonly nacks: number;
  readonly lastAck: { readonly version: string; readonly atMs: number } | undefined;
  /**
   * The version of RateLimitConfig last ACKed: the rules serving. An ACK of another type (the
   * quota rules, unchanged) under a newer version does not make a NACKed rules version serve.
   */
  readonly rulesVersion?: string;
  readonly lastNack:
    { readonly version: string; readonly atMs: number; readonly reason: string } | undefined;
}

/**
 * Binds an XdsStatus to the statistics of one process. Counters follow the status's totals;
 * each version gauge keeps one series, the previous version's removed when it changes.
 */
export class XdsStatistics {
  private reported = { acks: 0, nacks: 0 };
  private lastAckAtMs: number | undefined;
  private readonly versions = new Map<XdsVersionStat, string>();

  constructor(
    private readonly store: StatsStore,
    private readonly nowMs: () => number,
  ) {
    store.gauge(STAT.xds('connected')).set(0);
    store.addGenerator(() => {
      if (this.lastAckAtMs === undefined) return;
      const ageSeconds = Math.max(0, Math.floor((this.nowMs() - this.lastAckAtMs) / 1000));
      this.store.gauge(STAT.xds('update_age_seconds')).set(ageSeconds);
    });
  }

  update(status: XdsStatus): void {
    const { store } = this;
    store.gauge(STAT.xds('connected')).set(status.isConnected ? 1 : 0);
    // A status from a restarted source (a new supervisor) starts its totals over.
    if (status.acks < this.reported.acks || status.nacks < this.reported.nacks)
      this.reported = { acks: 0, nacks: 0 };
    store.counter(STAT.xds('acks')).add(status.acks - this.reported.acks);
    store.counter(STAT.xds('nacks')).add(status.nacks - this.reported.nacks);
    this.reported = { acks: status.acks, nacks: status.nacks };
    this.lastAckAtMs = status.lastAck?.atMs;
    this.version('last_ack_version', status.lastAck?.version);
    this.version('last_nack_version', status.lastNack?.version);
  }

  private version(stat: XdsVersionStat, version: string | undefined): void {
    const previous = this.versions.get(stat);
    if (version === undefined || version === previous) return;
    if (previous !== undefined) this.store.removeGauge(STAT.xds(stat), { version: previous });
    this.versions.set(stat, version);
    this.store.gauge(STAT.xds(stat), { version }).set(1);
  }
}
