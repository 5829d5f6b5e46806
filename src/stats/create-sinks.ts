// The sinks the settings choose, each made by the factory registered for its type.
import { readFileSync } from 'node:fs';
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { StateLog } from '../lib/state-log';
import { SettingsError, type StatsSinkSettings } from '../settings';
import { defaultMapping } from './prometheus/default-mapping';
import { MetricMapper } from './prometheus/mapper';
import { PrometheusSink } from './prometheus/prometheus-sink';
import type { StatsSink } from './sink';
import { DogStatsdSink } from './sinks/dogstatsd-sink';
import { StatsdSink } from './sinks/statsd-sink';
import { StdoutSink } from './sinks/stdout-sink';
import type { StatsStore, StatTags } from './store';

/** What every sink factory may use besides its own settings. */
export interface SinkDeps {
  readonly store: StatsStore;
  readonly extraTags: StatTags;
  readonly logger: Logger;
}

type SinkSettingsOf = {
  readonly [K in StatsSinkSettings['type']]: Extract<StatsSinkSettings, { type: K }>;
};
type SinkFactories = {
  readonly [K in keyof SinkSettingsOf]: (settings: SinkSettingsOf[K], deps: SinkDeps) => StatsSink;
};

/**
 * The mapping file, or the built-in mapping; a bad file stops start-up naming the setting. A
 * missing file starts with no mapping at all, every statistic under its escaped statsd name, and
 * a warning naming the file: the reference ignores the error of reading it (statsd_exporter's
 * mapper keeps no rules), and Envoy Gateway mounts the file from an optional ConfigMap.
 */
export function loadMapper(
  file: string | undefined,
  responseTimeAsMilliseconds: boolean,
  logger: Logger,
): MetricMapper {
  if (file === undefined)
    return MetricMapper.fromYaml(
      defaultMapping(responseTimeAsMilliseconds),
      'the built-in mapping',
    );
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err: unknown) {
    if (isMissingFile(err)) {
      logger.warn(
        'PROMETHEUS_MAPPER_YAML names a file that does not exist: no mapping, every statistic is exported under its escaped statsd name',
        { file },
      );
      return MetricMapper.fromYaml('mappings: []\n', 'no mapping');
    }
    throw new SettingsError([
      { setting: 'PROMETHEUS_MAPPER_YAML', message: `cannot read ${file}: ${describeError(err)}` },
    ]);
  }
  try {
    return MetricMapper.fromYaml(text, file);
  } catch (err: unknown) {
    throw new SettingsError([{ setting: 'PROMETHEUS_MAPPER_YAML', message: describeError(err) }]);
  }
}

function isMissingFile(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ENOENT';
}

/**
 * What sending statistics tells the log: a warning when it starts failing or fails for a new
 * reason (statsd not up yet, or gone), one info line when it works again, each failure alike a
 * debug line. Statistics are dropped meanwhile; the service serves on.
 */
function sendOutcomes(logger: Logger): { onError: (err: Error) => void; onSent: () => void } {
  const state = new StateLog(logger);
  return {
    onError: (err) => {
      state.failed(
        'cannot send statistics to statsd; they are dropped until it answers',
        err.message,
        {
          error: err.message,
        },
      );
    },
    onSent: () => {
      state.succeeded('sending statistics to statsd again');
    },
  };
}

/** One line per sink type: adding a sink is a new file in sinks/ and a line here. */
const SINKS: SinkFactories = {
  stdout: (_settings, deps) => new StdoutSink(process.stdout, deps.extraTags),
  statsd: (settings, deps) =>
    new StatsdSink({ ...settings, extraTags: deps.extraTags, ...sendOutcomes(deps.logger) }),
  dogstatsd: (settings, deps) =>
    new DogStatsdSink({
      ...settings,
      extraTags: deps.extraTags,
      ...sendOutcomes(deps.logger),
    }),
  prometheus: (settings, deps) =>
    new PrometheusSink({
      mapper: loadMapper(settings.mapperYaml, settings.responseTimeAsMilliseconds, deps.logger),
      store: deps.store,
      extraTags: deps.extraTags,
      logger: deps.logger,
    }),
};

function createSink<K extends keyof SinkSettingsOf>(
  settings: SinkSettingsOf[K] & { type: K },
  deps: SinkDeps,
): StatsSink {
  const factory: SinkFactories[K] = SINKS[settings.type];
  return factory(settings, deps);
}

/** The sinks of `sinks`, in order; throws SettingsError when a sink's own file is bad. */
export function createSinks(sinks: readonly StatsSinkSettings[], deps: SinkDeps): StatsSink[] {
  return sinks.map((settings) => createSink(settings, deps));
}
