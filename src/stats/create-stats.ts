// Statistics for one service process: the store, its sinks, the flusher and the build info.
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/logger';
import { SERVICE_VERSION } from '../lib/version';
import type { StatsSettings } from '../settings';
import { createSinks } from './create-sinks';
import { StatsFlusher } from './flusher';
import { STAT } from './names';
import { PrometheusSink } from './prometheus/prometheus-sink';
import type { StatsSink } from './sink';
import { StatsStore } from './store';

/** This process's metrics as prom-client's JSON, which a supervisor can sum over workers. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** The Prometheus sink's scrape: where the settings serve it and what it answers. */
export interface PrometheusScrape {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  /** The exposition text with every count up to now: statistics are flushed first. */
  render(): Promise<{ contentType: string; body: string }>;
  /** The same, as JSON for the supervisor of WORKERS. */
  collect(): Promise<MetricsJson>;
}

export interface Statistics {
  readonly store: StatsStore;
  /** Set while USE_PROMETHEUS is on (and statistics are enabled). */
  readonly prometheus: PrometheusScrape | undefined;
  /** Stops the periodic flush, flushes one last time and closes every sink. */
  close(): Promise<void>;
}

export interface StatisticsOptions {
  readonly logger: Logger;
  /** Replaces the push sinks the settings choose (tests); a Prometheus sink stays for its scrape. */
  readonly sinkOverride?: StatsSink;
}

/** ratelimit_build_info: a gauge of 1 whose `version` tag is the service version. */
export function reportBuildInfo(store: StatsStore, version: string = SERVICE_VERSION): void {
  store.gauge(STAT.buildInfo, { version }).set(1);
}

function scrapeOf(
  settings: StatsSettings,
  sink: PrometheusSink | undefined,
  flusher: StatsFlusher,
): PrometheusScrape | undefined {
  const where = settings.sinks.find((s) => s.type === 'prometheus');
  if (sink === undefined || where === undefined) return undefined;
  return {
    host: where.host,
    port: where.port,
    path: where.path,
    render: async () => {
      await flusher.flush();
      return sink.render();
    },
    collect: async () => {
      await flusher.flush();
      return sink.registry.getMetricsAsJSON();
    },
  };
}

/**
 * The statistics of the settings, flushing every STATS_FLUSH_INTERVAL. With statistics
 * disabled every handle is a no-op and nothing is sent. Throws SettingsError when a sink's
 * own file (PROMETHEUS_MAPPER_YAML) is bad.
 */
export function startStatistics(settings: StatsSettings, options: StatisticsOptions): Statistics {
  const store = new StatsStore({
    isEnabled: settings.enabled,
    maxRuleKeys: settings.maxRuleKeys,
    maxRuntimeKeyBytes: settings.maxRuntimeKeyBytes,
  });
  if (!settings.enabled) return { store, prometheus: undefined, close: () => Promise.resolve() };
  reportBuildInfo(store);
  const sinks = createSinks(settings.sinks, {
    store,
    extraTags: settings.extraTags,
    logger: options.logger,
  });
  const prometheus = sinks.find((s): s is PrometheusSink => s instanceof PrometheusSink);
  const flushed =
    options.sinkOverride === undefined
      ? sinks
      : [options.sinkOverride, ...(prometheus === undefined ? [] : [prometheus])];
  const flusher = new StatsFlusher(store, flushed, options.logger);
  flusher.start(settings.flushIntervalMs);
  return {
    store,
    prometheus: scrapeOf(settings, prometheus, flusher),
    close: () => flusher.close(),
  };
}
