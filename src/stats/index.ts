// Statistics: the in-process store with bound handles, names, the sink seam and its sinks.
export {
  StatsStore,
  type Counter,
  type Gauge,
  type Timer,
  type RuleStats,
  type RuleStatsFactory,
  type StatsSnapshot,
} from './store';
export { STAT, RULE_STAT_SUFFIXES, sanitizeStatName } from './names';
export type { StatsSink } from './sink';
export { StatsFlusher } from './flusher';
export { StatsdSink } from './sinks/statsd-sink';
export { StdoutSink } from './sinks/stdout-sink';
