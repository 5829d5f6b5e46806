// What the supervisor and its workers say to each other over the cluster IPC channel.
import type { Registry } from 'prom-client';
import type {
  ConfigErrorCode,
  ConfigOrigin,
  NodeStrings,
  SourcePosition,
  TablesHeader,
} from '../config';
import type { XdsStatus } from '../stats';

/** The worker's index (0..WORKERS-1) travels in this variable; it is not a setting. */
export const WORKER_INDEX_VARIABLE = 'RATELIMIT_WORKER_INDEX';

/** One worker's metrics as prom-client's getMetricsAsJSON gives them. */
export type WorkerMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** A ConfigError as plain data: errors lose their class when they cross processes. */
export interface PlainConfigError {
  readonly code: ConfigErrorCode;
  readonly source: string;
  readonly reason: string;
  readonly position: SourcePosition | undefined;
  /** The error's message as ConfigError writes it, for the supervisor's one log line. */
  readonly message: string;
}

/**
 * The pod's configuration as the supervisor hands it to a worker: a loaded one as its header
 * followed by its parts in order (the worker builds one part per turn of its event loop, as
 * from a compile process), or a refused update.
 */
export type ConfigUpdate =
  | {
      readonly kind: 'ratelimit:config-header';
      /** Counts the supervisor's loads: the parts of a load name it, a newer load drops them. */
      readonly generation: number;
      readonly header: TablesHeader;
      readonly origin: ConfigOrigin | undefined;
    }
  | {
      readonly kind: 'ratelimit:config-part';
      readonly generation: number;
      readonly part: NodeStrings;
    }
  | { readonly kind: 'ratelimit:config-refused'; readonly errors: readonly PlainConfigError[] }
  | {
      /**
       * The statistics of loading, which the supervisor's provider keeps (the file loader's
       * `runtime.*`): counters as totals since the supervisor started, gauges as they stand.
       * Each worker reports them as its own, as it did when it loaded for itself.
       */
      readonly kind: 'ratelimit:config-stats';
      readonly counters: readonly (readonly [string, number])[];
      readonly gauges: readonly (readonly [string, number])[];
    }
  /** The supervisor's xDS client's status, as it changes (and the current one to a follower). */
  | { readonly kind: 'ratelimit:xds-status'; readonly status: XdsStatus };

/** Counters and gauges by name, as /stats lists them, in a form that crosses processes. */
export interface PlainStats {
  readonly counters: readonly (readonly [string, number])[];
  readonly gauges: readonly (readonly [string, number])[];
}

export type ToSupervisor =
  | { readonly kind: 'ratelimit:ready' }
  /** The worker serving debug asks for the statistics of every worker, summed. */
  | { readonly kind: 'ratelimit:stats-request'; readonly id: number }
  /** A worker's own statistics, answering the supervisor's `ratelimit:stats-collect`. */
  | { readonly kind: 'ratelimit:stats'; readonly id: number; readonly stats: PlainStats }
  /** The worker follows the pod's configuration from now on: send the current one. */
  | { readonly kind: 'ratelimit:config-request' }
  | {
      readonly kind: 'ratelimit:metrics';
      readonly id: number;
      readonly metrics?: WorkerMetrics;
      readonly error?: string;
    };

/** What the supervisor asks of workers besides the configuration. */
export type ToWorkerRequest =
  | { readonly kind: 'ratelimit:metrics-request'; readonly id: number }
  | { readonly kind: 'ratelimit:stats-collect'; readonly id: number }
  | {
      /** Every worker's statistics summed, answering `ratelimit:stats-request`. */
      readonly kind: 'ratelimit:stats-totals';
      readonly id: number;
      readonly stats: PlainStats;
      readonly workers: number;
    };

export type ToWorker = ToWorkerRequest | ConfigUpdate;

const TO_SUPERVISOR = new Set<unknown>([
  'ratelimit:ready',
  'ratelimit:config-request',
  'ratelimit:metrics',
  'ratelimit:stats-request',
  'ratelimit:stats',
]);
const TO_WORKER_REQUEST = new Set<unknown>([
  'ratelimit:metrics-request',
  'ratelimit:stats-collect',
  'ratelimit:stats-totals',
]);
const CONFIG_UPDATE = new Set<unknown>([
  'ratelimit:config-header',
  'ratelimit:config-part',
  'ratelimit:config-refused',
  'ratelimit:config-stats',
  'ratelimit:xds-status',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isToSupervisor(value: unknown): value is ToSupervisor {
  return isObject(value) && TO_SUPERVISOR.has(value.kind);
}

export function isToWorker(value: unknown): value is ToWorker {
  return isObject(value) && (TO_WORKER_REQUEST.has(value.kind) || isConfigUpdate(value));
}

export function isConfigUpdate(value: unknown): value is ConfigUpdate {
  return isObject(value) && CONFIG_UPDATE.has(value.kind);
}
