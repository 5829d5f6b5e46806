// WORKERS above 1: the pod's one configuration source runs in the supervisor, and each of its
// outcomes goes to every worker; a worker that starts later gets the current one at once.
import type { Worker } from 'node:cluster';
import type { Logger } from '../lib/logger';
import type { ConfigUpdate, PlainConfigError } from './messages';

/** Receives the pod's configuration source's outcomes as the messages that hand them over. */
export interface PodConfigListener {
  /**
   * A configuration loaded: its header, then its parts in order, then the statistics of
   * loading. It replaces the current one.
   */
  loaded(messages: readonly ConfigUpdate[]): void;
  /**
   * An update was refused (its errors, then the statistics of loading); the configuration
   * loaded before keeps serving in every worker. `fields` (where it came from) go in its log line.
   */
  refused(messages: readonly ConfigUpdate[], fields?: Readonly<Record<string, string>>): void;
  /** The xDS client's status changed; it replaces the one sent before. */
  xds(message: ConfigUpdate): void;
}

/**
 * The pod's configuration source (CONFIG_TYPE's provider, compiling in the supervisor): the
 * ConfigProvider seam, its snapshots turned into messages a worker builds its own snapshot from.
 */
export interface PodConfig {
  /** As ConfigProvider.start: resolves once watching is set up; rejects when it cannot start. */
  start(listener: PodConfigListener): Promise<void>;
  stop(): Promise<void>;
}

function errorText(e: PlainConfigError): string {
  return e.message;
}

/** Keeps the current outcome and sends every outcome to the workers that follow it. */
export class ConfigFanOut implements PodConfigListener {
  private current: readonly ConfigUpdate[] = [];
  /** The refusal since the current configuration loaded, for a worker's status page. */
  private refusal: readonly ConfigUpdate[] = [];
  private xdsStatus: readonly ConfigUpdate[] = [];
  private readonly followers = new Set<Worker>();

  constructor(private readonly logger: Logger) {}

  loaded(messages: readonly ConfigUpdate[]): void {
    this.current = messages;
    this.refusal = [];
    const header = messages[0];
    if (header?.kind === 'ratelimit:config-header') {
      this.logger.info('compiled a configuration for every worker', {
        generation: header.generation,
        nodes: header.header.nodeCount,
        following: this.followers.size,
      });
    }
    for (const worker of this.followers) this.send(worker, messages);
  }

  /** The one line of a refusal in the pod: the workers hand it on without logging it again. */
  refused(messages: readonly ConfigUpdate[], fields: Readonly<Record<string, string>> = {}): void {
    this.refusal = messages;
    const reasons = messages.flatMap((m) =>
      m.kind === 'ratelimit:config-refused' ? m.errors.map(errorText) : [],
    );
    this.logger.error(
      this.current.length === 0
        ? 'configuration refused; no configuration is loaded, every worker refuses requests until a valid one arrives'
        : 'configuration refused; the loaded configuration serves on in every worker',
      { error: reasons.join('; '), ...fields, following: this.followers.size },
    );
    for (const worker of this.followers) this.send(worker, messages);
  }

  xds(message: ConfigUpdate): void {
    this.xdsStatus = [message];
    for (const worker of this.followers) this.send(worker, this.xdsStatus);
  }

  /** `worker` asked for the configuration: the current one now, every outcome from now on. */
  follow(worker: Worker): void {
    this.followers.add(worker);
    this.send(worker, [...this.current, ...this.refusal, ...this.xdsStatus]);
  }

  forget(worker: Worker): void {
    this.followers.delete(worker);
  }

  private send(worker: Worker, messages: readonly ConfigUpdate[]): void {
    for (const message of messages) {
      if (!worker.isConnected()) return;
      // A worker that dies meanwhile is replaced, and its replacement asks again.
      worker.send(message, (err: Error | null) => {
        if (err !== null)
          this.logger.debug('a worker missed a configuration message', { error: err.message });
      });
    }
  }
}
