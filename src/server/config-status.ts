// What the configuration source last did: when the current configuration loaded and from
// where, and the last refusal with its reasons, for the debug listener's /rules and page.
import type { ConfigError, ConfigOrigin } from '../config';
import type { XdsStatus } from '../stats';

export interface ConfigLoad {
  readonly atMs: number;
  /** Undefined when the provider did not say (a provider made by a test). */
  readonly origin: ConfigOrigin | undefined;
}

export interface ConfigRefusal {
  readonly atMs: number;
  readonly errors: readonly string[];
}

/** Written by the composition root's configuration listener, read by the debug listener. */
export class ConfigStatus {
  private lastLoad: ConfigLoad | undefined;
  private lastRefusal: ConfigRefusal | undefined;
  private xdsStatus: XdsStatus | undefined;

  constructor(private readonly nowMs: () => number = Date.now) {}

  loaded(origin: ConfigOrigin | undefined): void {
    this.lastLoad = { atMs: this.nowMs(), origin };
  }

  /**
   * The xDS client's status changed. An ACK of an unchanged set (the same resources under a
   * new version) loads nothing, yet the version serving is now the one acknowledged.
   */
  xds(status: XdsStatus): void {
    this.xdsStatus = status;
    const origin = this.lastLoad?.origin;
    const version = status.rulesVersion;
    if (this.lastLoad === undefined || origin?.kind !== 'xds' || version === undefined) return;
    if (version !== origin.version)
      this.lastLoad = { ...this.lastLoad, origin: { ...origin, version } };
  }

  /** The xDS client's status; undefined when the configuration does not come over xDS. */
  get xdsState(): XdsStatus | undefined {
    return this.xdsStatus;
  }

  refused(errors: readonly ConfigError[]): void {
    this.lastRefusal = { atMs: this.nowMs(), errors: errors.map((e) => e.message) };
  }

  /** The load that produced the configuration serving now; undefined before the first. */
  get current(): ConfigLoad | undefined {
    return this.lastLoad;
  }

  /** The last refused update, even when a later one loaded. */
  get lastRefused(): ConfigRefusal | undefined {
    return this.lastRefusal;
  }
}
