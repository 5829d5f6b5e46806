// The supervisor's side of one compile per pod: its provider's snapshots as the messages that
// hand their tables to the workers.
import type { ConfigUpdate, PodConfig, PodConfigListener } from '../../cluster';
import { originFields, snapshotTables, stringParts, type ConfigError } from '../../config';
import type { XdsStatus } from '../../stats';
import { NODES_PER_PART } from '../compile';
import type { StatsSnapshot } from '../../stats';
import type { ConfigProvider } from '../provider';

/** The statistics of loading as they stand. */
function statsUpdate(stats: StatsSnapshot): ConfigUpdate {
  return {
    kind: 'ratelimit:config-stats',
    counters: [...stats.counters],
    gauges: [...stats.gauges],
  };
}

/** A refusal's errors as plain data. */
function plainErrors(errors: readonly ConfigError[]): ConfigUpdate {
  return {
    kind: 'ratelimit:config-refused',
    errors: errors.map(({ code, source, reason, position, message }) => ({
      code,
      source,
      reason,
      position,
      message,
    })),
  };
}

/**
 * Runs a provider (the file watcher or the xDS client, compiling as it always does) as the
 * pod's configuration source: it is the provider's listener, and forwards each snapshot as its
 * tables in parts, each refusal as its errors, each followed by the statistics of loading.
 */
export class ProviderPodConfig implements PodConfig {
  private generation = 0;
  private listener: PodConfigListener | undefined;

  /** @param stats the statistics the provider keeps (the file loader's), read after each outcome. */
  constructor(
    private readonly provider: ConfigProvider,
    private readonly stats: () => StatsSnapshot,
  ) {}

  start(listener: PodConfigListener): Promise<void> {
    this.listener = listener;
    return this.provider.start({
      onSnapshot: (snapshot, origin) => {
        const tables = snapshotTables(snapshot);
        if (tables === undefined)
          throw new Error('the provider made a snapshot whose tables cannot be handed over');
        this.generation += 1;
        const generation = this.generation;
        const parts = stringParts(tables.strings, NODES_PER_PART);
        listener.loaded([
          { kind: 'ratelimit:config-header', generation, header: tables.header, origin },
          ...parts.map((part) => ({ kind: 'ratelimit:config-part' as const, generation, part })),
          statsUpdate(this.stats()),
        ]);
      },
      onRejected: (errors, origin) => {
        listener.refused([plainErrors(errors), statsUpdate(this.stats())], originFields(origin));
      },
    });
  }

  /** The xDS client's status changed: every worker hears of it. */
  xds(status: XdsStatus): void {
    this.listener?.xds({ kind: 'ratelimit:xds-status', status });
  }

  stop(): Promise<void> {
    return this.provider.stop();
  }
}
