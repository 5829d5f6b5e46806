// The xDS client's status as it changes (connected, ACKs, NACKs), handed to whoever watches it.
import { RATE_LIMIT_CONFIG } from '../../lib/proto';
import type { XdsStatus } from '../../stats';

/** Keeps the status and reports each change to `report`. */
export class XdsStatusTracker {
  private status: XdsStatus;

  constructor(
    server: string,
    private readonly nowMs: () => number,
    private readonly report: (status: XdsStatus) => void,
  ) {
    this.status = {
      server,
      isConnected: false,
      acks: 0,
      nacks: 0,
      lastAck: undefined,
      lastNack: undefined,
    };
  }

  get current(): XdsStatus {
    return this.status;
  }

  /** A stream was answered (true), or ended (false); only a change is reported. */
  connected(isConnected: boolean): void {
    if (this.status.isConnected === isConnected) return;
    this.update({ isConnected });
  }

  acked(version: string, typeUrl: string): void {
    const lastAck = { version, atMs: this.nowMs() };
    const isRules = typeUrl === RATE_LIMIT_CONFIG.typeUrl;
    this.update({
      acks: this.status.acks + 1,
      lastAck,
      ...(isRules ? { rulesVersion: version } : {}),
    });
  }

  nacked(version: string, reason: string): void {
    this.update({
      nacks: this.status.nacks + 1,
      lastNack: { version, atMs: this.nowMs(), reason },
    });
  }

  private update(change: Partial<XdsStatus>): void {
    this.status = { ...this.status, ...change };
    this.report(this.status);
  }
}
