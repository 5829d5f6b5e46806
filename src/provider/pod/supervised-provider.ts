// A worker's ConfigProvider with WORKERS above 1: the supervisor compiles the pod's
// configuration once, and this builds the worker's snapshot from the tables it hands over.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ConfigUpdate, SupervisorLink } from '../../cluster';
import { ConfigError, SnapshotBuilder, type CompileOptions } from '../../config';
import type { XdsStatus } from '../../stats';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import type { Counter, Gauge } from '../../stats';
import type { ConfigListener, ConfigProvider } from '../provider';

export interface SupervisedProviderOptions {
  /** Where the snapshot's statistics go: this worker's. */
  readonly compile: CompileOptions;
  readonly link: SupervisorLink;
  readonly logger: Logger;
  /** Where the supervisor's statistics of loading are reported: this worker's statistics. */
  readonly stats: { counter(name: string): Counter; gauge(name: string): Gauge };
  /**
   * Whether this worker reports them: one worker does (the one serving debug), so that the
   * totals of every worker (/stats, a summed scrape) count the supervisor's loads once.
   */
  readonly reportsLoading: boolean;
  /** Told the supervisor's xDS client's status as it changes. */
  readonly onXdsStatus?: (status: XdsStatus) => void;
}

/** The load being built: its generation, its builder and where it came from. */
interface Building {
  readonly update: Extract<ConfigUpdate, { kind: 'ratelimit:config-header' }>;
  readonly builder: SnapshotBuilder;
}

/**
 * Follows the supervisor: each load arrives as a header and parts, built here one part per turn
 * of the event loop so that answering goes on meanwhile (as from a compile process); a newer
 * load drops an unfinished older one. Refusals arrive as errors, in order with the loads.
 */
export class SupervisedProvider implements ConfigProvider {
  private listener: ConfigListener | undefined;
  private unlisten: (() => void) | undefined;
  private readonly queue: ConfigUpdate[] = [];
  private isDraining = false;
  private building: Building | undefined;
  private idle: Promise<void> = Promise.resolve();
  /** The supervisor's counter totals reported so far, by name. */
  private readonly reported = new Map<string, number>();

  constructor(private readonly options: SupervisedProviderOptions) {}

  start(listener: ConfigListener): Promise<void> {
    this.listener = listener;
    this.unlisten = this.options.link.listen((update) => {
      this.queue.push(update);
      if (!this.isDraining) this.idle = this.drain();
    });
    this.options.link.request();
    return Promise.resolve();
  }

  /** Handles queued messages in order, one per turn. */
  private async drain(): Promise<void> {
    this.isDraining = true;
    try {
      for (let update = this.queue.shift(); update !== undefined; update = this.queue.shift()) {
        if (this.listener === undefined) return;
        try {
          this.handle(update, this.listener);
        } catch (err: unknown) {
          this.options.logger.error('applying the configuration from the supervisor failed', {
            error: describeError(err),
          });
        }
        await nextTurn();
      }
    } finally {
      this.isDraining = false;
    }
  }

  private handle(update: ConfigUpdate, listener: ConfigListener): void {
    switch (update.kind) {
      case 'ratelimit:config-header': {
        const builder = new SnapshotBuilder(update.header, this.options.compile);
        this.building = { update, builder };
        this.finishIfComplete(listener);
        return;
      }
      case 'ratelimit:config-part':
        if (this.building?.update.generation !== update.generation) return;
        this.tryBuilding(() => this.building?.builder.add(update.part));
        this.finishIfComplete(listener);
        return;
      case 'ratelimit:config-refused':
        listener.onRejected(
          update.errors.map((e) => new ConfigError(e.code, e.source, e.reason, e.position)),
        );
        return;
      case 'ratelimit:config-stats':
        if (this.options.reportsLoading) this.report(update);
        return;
      case 'ratelimit:xds-status':
        this.options.onXdsStatus?.(update.status);
        return;
    }
  }

  /** Counters move by what the supervisor's totals grew since the last report; gauges are set. */
  private report(update: Extract<ConfigUpdate, { kind: 'ratelimit:config-stats' }>): void {
    const stats = this.options.stats;
    for (const [name, total] of update.counters) {
      const grown = total - (this.reported.get(name) ?? 0);
      if (grown <= 0) continue;
      this.reported.set(name, total);
      stats.counter(name).add(grown);
    }
    for (const [name, value] of update.gauges) stats.gauge(name).set(value);
  }

  /** Once every part of the load is built: its snapshot replaces the current one. */
  private finishIfComplete(listener: ConfigListener): void {
    const building = this.building;
    if (building === undefined || !building.builder.isComplete) return;
    this.building = undefined;
    const snapshot = this.tryBuilding(() => building.builder.finish());
    if (snapshot !== undefined) listener.onSnapshot(snapshot, building.update.origin);
  }

  /** Runs one step of building; a failure drops the load (the current one serves on). */
  private tryBuilding<T>(step: () => T): T | undefined {
    try {
      return step();
    } catch (err: unknown) {
      this.building = undefined;
      this.options.logger.error(
        'the configuration from the supervisor could not be built; the current one serves on',
        { error: describeError(err) },
      );
      return undefined;
    }
  }

  async stop(): Promise<void> {
    this.unlisten?.();
    this.unlisten = undefined;
    this.listener = undefined;
    this.queue.length = 0;
    await this.idle;
  }
}
