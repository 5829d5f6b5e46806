// Several server processes sharing the listeners: the supervisor and the worker's side of it.
export {
  Supervisor,
  type MetricsListener,
  type Scrape,
  type SupervisorOptions,
} from './supervisor';
export { announceReady, serveMetrics, workerIndex } from './worker-link';
export { WORKER_INDEX_VARIABLE, type WorkerMetrics } from './messages';
