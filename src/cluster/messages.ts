// What the supervisor and its workers say to each other over the cluster IPC channel.
import type { Registry } from 'prom-client';

/** The worker's index (0..WORKERS-1) travels in this variable; it is not a setting. */
export const WORKER_INDEX_VARIABLE = 'RATELIMIT_WORKER_INDEX';

/** One worker's metrics as prom-client's getMetricsAsJSON gives them. */
export type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export type ToSupervisor =
  | { readonly kind: 'ratelimit:ready' }
  | {
      readonly kind: 'ratelimit:metrics';
      readonly id: number;
      readonly metrics?: WorkerMetrics;
      readonly error?: string;
    };

export type ToWorker = { readonly kind: 'ratelimit:metrics-request'; readonly id: number };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isToSupervisor(value: unknown): value is ToSupervisor {
  return (
    isObject(value) && (value.kind === 'ratelimit:ready' || value.kind === 'ratelimit:metrics')
  );
}

export function isToWorker(value: unknown): value is ToWorker {
  return isObject(value) && value.kind === 'ratelimit:metrics-request';
}
