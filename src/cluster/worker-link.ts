// The worker's side of the cluster channel: it says when it listens, hands its metrics to the
// supervisor, which serves the one Prometheus scrape for all workers, and follows the pod's
// configuration, which the supervisor compiles.
import {
  WORKER_INDEX_VARIABLE,
  isConfigUpdate,
  isToWorker,
  type ConfigUpdate,
  type PlainStats,
  type ToSupervisor,
  type WorkerMetrics,
} from './messages';

/** How long the worker serving debug waits for the supervisor's sums (its own timeout is 5 s). */
const STATS_TOTALS_TIMEOUT_MS = 7_000;

/**
 * This process's worker index when a supervisor forked it (the variable is set and the IPC
 * channel is open); undefined otherwise. The command-line entry passes its environment.
 */
export function workerIndex(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env[WORKER_INDEX_VARIABLE];
  if (raw === undefined || process.send === undefined) return undefined;
  const index = Number(raw);
  return Number.isInteger(index) && index >= 0 ? index : undefined;
}

function send(message: ToSupervisor): void {
  process.send?.(message);
}

export function announceReady(): void {
  send({ kind: 'ratelimit:ready' });
}

/** Answers the supervisor's metrics requests with `collect()`. */
export function serveMetrics(collect: () => Promise<WorkerMetrics>): void {
  process.on('message', (message: unknown) => {
    if (!isToWorker(message) || message.kind !== 'ratelimit:metrics-request') return;
    collect().then(
      (metrics) => {
        send({ kind: 'ratelimit:metrics', id: message.id, metrics });
      },
      (err: unknown) => {
        send({
          kind: 'ratelimit:metrics',
          id: message.id,
          error: err instanceof Error ? err.message : String(err),
        });
      },
    );
  });
}

/** Answers the supervisor's requests for this worker's statistics with `snapshot()`. */
export function serveStats(snapshot: () => PlainStats): void {
  process.on('message', (message: unknown) => {
    if (!isToWorker(message) || message.kind !== 'ratelimit:stats-collect') return;
    send({ kind: 'ratelimit:stats', id: message.id, stats: snapshot() });
  });
}

let nextStatsRequest = 1;

/**
 * Every worker's statistics summed, from the supervisor, and how many workers answered;
 * rejects when the supervisor does not answer in time.
 */
export function statsTotals(): Promise<{ stats: PlainStats; workers: number }> {
  const id = nextStatsRequest++;
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      if (!isToWorker(message) || message.kind !== 'ratelimit:stats-totals') return;
      if (message.id !== id) return;
      done();
      resolve({ stats: message.stats, workers: message.workers });
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error("the supervisor did not sum the workers' statistics in time"));
    }, STATS_TOTALS_TIMEOUT_MS);
    const done = (): void => {
      clearTimeout(timer);
      process.off('message', onMessage);
    };
    process.on('message', onMessage);
    send({ kind: 'ratelimit:stats-request', id });
  });
}

/** How a worker follows the configuration the supervisor compiles for the pod. */
export interface SupervisorLink {
  /** Asks for the current configuration; every later outcome follows by itself. */
  request(): void;
  /** Calls `handler` with each configuration message; returns what stops listening. */
  listen(handler: (update: ConfigUpdate) => void): () => void;
}

/** This worker's link to its supervisor's configuration. */
export const supervisorLink: SupervisorLink = {
  request() {
    send({ kind: 'ratelimit:config-request' });
  },
  listen(handler) {
    const onMessage = (message: unknown): void => {
      if (isConfigUpdate(message)) handler(message);
    };
    process.on('message', onMessage);
    return () => {
      process.off('message', onMessage);
    };
  },
};
