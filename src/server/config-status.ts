// What the configuration source last did: when the current configuration loaded and from
// where, and the last refusal with its reasons, for the debug listener's /rules and page.
import type { ConfigError, ConfigOrigin } from '../config';

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

  constructor(private readonly nowMs: () => number = Date.now) {}

  loaded(origin: ConfigOrigin | undefined): void {
    this.lastLoad = { atMs: this.nowMs(), origin };
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
