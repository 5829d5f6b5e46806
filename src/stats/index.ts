// Statistics: the in-process store with bound handles, names, the sink seam and its sinks.
export {
  StatsStore,
  type Counter,
  type Gauge,
  type Timer,
  type RuleStats,
  type RuleStatsFactory,
  type StatsSnapshot,
  type StatsStoreOptions,
  type StatTags,
} from './store';
export { STAT, RULE_STAT_SUFFIXES, sanitizeStatName } from './names';
export type { StatsSink } from './sink';
export { StatsFlusher } from './flusher';
export { XdsStatistics, type XdsStatus } from './xds-stats';
export { StatsdSink } from './sinks/statsd-sink';
export { DogStatsdSink } from './sinks/dogstatsd-sink';
export { StdoutSink } from './sinks/stdout-sink';
export { Mogrifier } from './sinks/mogrifier';
export { nameTagSuffix, tagList } from './tags';
export { PrometheusSink } from './prometheus/prometheus-sink';
export { MetricMapper, MapperError, escapeMetricName } from './prometheus/mapper';
export { defaultMapping } from './prometheus/default-mapping';
export { createSinks, loadMapper, type SinkDeps } from './create-sinks';
export {
  reportBuildInfo,
  startStatistics,
  type MetricsJson,
  type PrometheusScrape,
  type Statistics,
  type StatisticsOptions,
} from './create-stats';
