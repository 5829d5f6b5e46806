// Several server processes sharing the listeners: the supervisor and the worker's side of it.
export {
  Supervisor,
  type MetricsListener,
  type Scrape,
  type SupervisorOptions,
} from './supervisor';
export {
  announceReady,
  serveMetrics,
  serveStats,
  statsTotals,
  supervisorLink,
  workerIndex,
  type SupervisorLink,
} from './worker-link';
export { type PodConfig, type PodConfigListener } from './config-fan-out';
export {
  WORKER_INDEX_VARIABLE,
  type ConfigUpdate,
  type PlainConfigError,
  type PlainStats,
  type WorkerMetrics,
} from './messages';
