// The supervisor's side of one compile per pod: its provider's snapshots as the messages that
// hand their tables to the workers.
import type { ConfigUpdate, PodConfig, PodConfigListener } from '../../cluster';
import { snapshotTables, stringParts, type ConfigError } from '../../config';
import { NODES_PER_PART } from '../compile';
import type { ConfigProvider } from '../provider';

/** A refusal's errors as plain data. */
function plainErrors(errors: readonly ConfigError[]): ConfigUpdate {
  return {
    kind: 'ratelimit:config-refused',
    errors: errors.map(({ code, source, reason, position }) => ({
      code,
      source,
      reason,
      position,
    })),
  };
}

/**
 * Runs a provider (the file watcher or the xDS client, compiling as it always does) as the
 * pod's configuration source: it is the provider's listener, and forwards each snapshot as its
 * tables in parts, each refusal as its errors.
 */
export class ProviderPodConfig implements PodConfig {
  private generation = 0;

  constructor(private readonly provider: ConfigProvider) {}

  start(listener: PodConfigListener): Promise<void> {
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
        ]);
      },
      onRejected: (errors) => {
        listener.refused(plainErrors(errors));
      },
    });
  }

  stop(): Promise<void> {
    return this.provider.stop();
  }
}
