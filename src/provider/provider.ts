// The ConfigProvider seam: a source of compiled snapshots (configuration files, or xDS).
import type { ConfigError, ConfigOrigin, ConfigSnapshot } from '../config';

/** Receives what a provider produces. */
export interface ConfigListener {
  /** A new snapshot compiled cleanly; it replaces the current one. `origin` says from where. */
  onSnapshot(snapshot: ConfigSnapshot, origin?: ConfigOrigin): void;
  /**
   * An update was refused; the current snapshot keeps serving. `origin` says from where when
   * the provider knows (an xDS update's version), for the refusal's one log line.
   */
  onRejected(errors: readonly ConfigError[], origin?: ConfigOrigin): void;
}

/**
 * A configuration source. It reads, compiles (so that it can accept or refuse an update
 * itself, as an xDS client must ACK or NACK) and pushes the outcome to its listener.
 */
export interface ConfigProvider {
  /**
   * Starts watching and resolves once watching is set up; outcomes arrive through the
   * listener, the first as soon as one is known. Rejects only when watching cannot start.
   */
  start(listener: ConfigListener): Promise<void>;
  /** Stops watching and releases watchers and connections. */
  stop(): Promise<void>;
}
