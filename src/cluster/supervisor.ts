// WORKERS above 1: this process forks the workers, which share the listening ports through
// node:cluster (the primary accepts and hands connections out in turn), replaces a worker that
// dies, serves the Prometheus scrape for all of them and stops them on SIGTERM or SIGINT.
// It runs the pod's one configuration source and hands each outcome to every worker
// (config-fan-out.ts); it opens no backend.
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Clock } from '../lib/clock';
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { ConfigFanOut, type PodConfig } from './config-fan-out';
import {
  WORKER_INDEX_VARIABLE,
  isToSupervisor,
  type PlainStats,
  type ToWorker,
  type WorkerMetrics,
} from './messages';
import { sumStats } from './stats-totals';

/** A worker that dies this soon after the previous replacement counts toward giving up. */
const RESTART_WINDOW_MS = 60_000;
const MAX_RESTARTS_IN_WINDOW = 5;
/** How long a scrape waits for every worker's metrics. */
const SCRAPE_TIMEOUT_MS = 5_000;
/** How long workers have to drain after SIGTERM before they are killed. */
const STOP_TIMEOUT_MS = 20_000;

/** The exposition text of a scrape. */
export type Scrape = () => Promise<{ contentType: string; body: string }>;

/** A listener the supervisor opened, as the composition root hands it back. */
export interface MetricsListener {
  /** Where it listens, for the log. */
  readonly address: string;
  close(drainMs: number): Promise<void>;
}

export interface SupervisorOptions {
  /** How many workers to fork (WORKERS). */
  readonly workers: number;
  readonly logger: Logger;
  /** Times the restart window (a worker that keeps dying stops the service). */
  readonly clock: Clock;
  /**
   * Opens the one Prometheus listener for all workers, answering with `scrape` (the workers'
   * metrics summed); undefined when Prometheus is off.
   */
  readonly serveMetrics: ((scrape: Scrape) => Promise<MetricsListener>) | undefined;
  /** The configuration source, compiled here once per update and handed to every worker. */
  readonly config: PodConfig;
  /** Called with the exit code once every worker is gone. */
  readonly exit: (code: number) => void;
}

interface Slot {
  worker: Worker;
  isReady: boolean;
}

export class Supervisor {
  private readonly slots = new Map<number, Slot>();
  private readonly restarts: number[] = [];
  private isStopping = false;
  private exitCode = 0;
  private metricsListener: MetricsListener | undefined;
  private readonly fanOut: ConfigFanOut;
  private nextScrape = 1;
  private readonly scrapes = new Map<
    number,
    { readonly replies: WorkerMetrics[]; readonly expected: number; readonly done: () => void }
  >();

  private readonly statsCollections = new Map<
    number,
    { readonly replies: PlainStats[]; readonly expected: number; readonly finish: () => void }
  >();

  constructor(private readonly options: SupervisorOptions) {
    this.fanOut = new ConfigFanOut(options.logger);
  }

  /**
   * Starts the configuration source and forks the workers meanwhile (each waits for the first
   * outcome as it would for its own); resolves once every worker listens.
   */
  async start(): Promise<void> {
    const { workers, logger, serveMetrics, config } = this.options;
    // Typed arrays (the compiled tables' columns) cross as they are, not as JSON objects.
    cluster.setupPrimary({ serialization: 'advanced' });
    const following = config.start(this.fanOut);
    const ready = Array.from({ length: workers }, (_, index) => this.fork(index));
    await Promise.all([following, ...ready]);
    if (serveMetrics !== undefined) {
      const listener = await serveMetrics(() => this.scrape());
      this.metricsListener = listener;
      logger.info('serving metrics of all workers', { metrics: listener.address });
    }
    logger.info('workers listening', { workers });
  }

  private fork(index: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const worker = cluster.fork({ [WORKER_INDEX_VARIABLE]: String(index) });
      const slot: Slot = { worker, isReady: false };
      this.slots.set(index, slot);
      worker.on('message', (message: unknown) => {
        if (!isToSupervisor(message)) return;
        if (message.kind === 'ratelimit:ready') {
          slot.isReady = true;
          resolve();
        } else if (message.kind === 'ratelimit:config-request') this.fanOut.follow(worker);
        else if (message.kind === 'ratelimit:stats-request') this.collectStats(worker, message.id);
        else if (message.kind === 'ratelimit:stats') this.onStats(message.id, message.stats);
        else this.onMetrics(message.id, message.metrics, message.error);
      });
      // Node passes null for whichever of the two did not end the process.
      worker.on('exit', (code: number | null, signal: string | null) => {
        if (this.slots.get(index)?.worker === worker) this.slots.delete(index);
        this.fanOut.forget(worker);
        if (this.isStopping) {
          // A worker still starting has no drain of its own yet: the SIGTERM sent to it ends it
          // by the signal, which is the stop asked for, not a failure.
          if (code !== 0 && signal !== 'SIGTERM') this.exitCode = 1;
          this.maybeExit();
          return;
        }
        const how = signal === null ? `with code ${String(code)}` : `by ${signal}`;
        if (!slot.isReady) {
          // It never got to listen: bad settings, a port in use or an unreachable backend. Its
          // own message is already on stderr; retrying would only repeat it.
          reject(new Error(`worker ${index} exited ${how} before it was ready`));
          this.stop(1);
          return;
        }
        this.replace(index, how);
      });
    });
  }

  private replace(index: number, how: string): void {
    const now = this.options.clock.nowMs();
    while (this.restarts.length > 0 && (this.restarts[0] ?? 0) < now - RESTART_WINDOW_MS)
      this.restarts.shift();
    if (this.restarts.length >= MAX_RESTARTS_IN_WINDOW) {
      this.options.logger.error(
        `worker ${index} exited ${how}; ${MAX_RESTARTS_IN_WINDOW} workers died within a minute, stopping`,
      );
      this.stop(1);
      return;
    }
    this.restarts.push(now);
    this.options.logger.error(`worker ${index} exited ${how}; starting a replacement`);
    this.fork(index).catch((err: unknown) => {
      this.options.logger.error(`the replacement of worker ${index} failed: ${describeError(err)}`);
    });
  }

  /** Asks every ready worker for its metrics and sums them as prom-client's cluster mode does. */
  private scrape(): Promise<{ contentType: string; body: string }> {
    const workers = [...this.slots.values()].filter((s) => s.isReady).map((s) => s.worker);
    const id = this.nextScrape++;
    return new Promise((resolve, reject) => {
      const replies: WorkerMetrics[] = [];
      const timer = setTimeout(() => {
        this.scrapes.delete(id);
        reject(new Error(`only ${replies.length} of ${workers.length} workers answered in time`));
      }, SCRAPE_TIMEOUT_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.scrapes.delete(id);
        const registry = AggregatorRegistry.aggregate(replies);
        registry.metrics().then((body) => {
          resolve({ contentType: registry.contentType, body });
        }, reject);
      };
      this.scrapes.set(id, { replies, expected: workers.length, done });
      const request: ToWorker = { kind: 'ratelimit:metrics-request', id };
      for (const worker of workers) worker.send(request);
      if (workers.length === 0) done();
    });
  }

  private onMetrics(
    id: number,
    metrics: WorkerMetrics | undefined,
    error: string | undefined,
  ): void {
    const scrape = this.scrapes.get(id);
    if (scrape === undefined) return;
    if (error !== undefined)
      this.options.logger.warn('a worker could not render its metrics', { error });
    scrape.replies.push(metrics ?? []);
    if (scrape.replies.length >= scrape.expected) scrape.done();
  }

  /**
   * Asks every ready worker for its statistics and answers `asker` with their sums; a worker
   * that has not answered within the scrape's timeout is left out, and the answer says how
   * many workers it sums.
   */
  private collectStats(asker: Worker, requestId: number): void {
    const workers = [...this.slots.values()].filter((s) => s.isReady).map((s) => s.worker);
    const id = this.nextScrape++;
    const replies: PlainStats[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      this.statsCollections.delete(id);
      const totals: ToWorker = {
        kind: 'ratelimit:stats-totals',
        id: requestId,
        stats: sumStats(replies),
        workers: replies.length,
      };
      if (asker.isConnected()) asker.send(totals);
    };
    const timer = setTimeout(finish, SCRAPE_TIMEOUT_MS);
    this.statsCollections.set(id, { replies, expected: workers.length, finish });
    const request: ToWorker = { kind: 'ratelimit:stats-collect', id };
    for (const worker of workers) worker.send(request);
    if (workers.length === 0) finish();
  }

  private onStats(id: number, stats: PlainStats): void {
    const collection = this.statsCollections.get(id);
    if (collection === undefined) return;
    collection.replies.push(stats);
    if (collection.replies.length >= collection.expected) collection.finish();
  }

  /** SIGTERM to every worker (they drain), then exit once all are gone. */
  stop(code = 0): void {
    if (code !== 0) this.exitCode = code;
    if (this.isStopping) return;
    this.isStopping = true;
    void this.metricsListener?.close(0);
    this.options.config.stop().catch((err: unknown) => {
      this.options.logger.warn('the configuration source did not stop cleanly', {
        error: describeError(err),
      });
    });
    for (const { worker } of this.slots.values()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const { worker } of this.slots.values()) worker.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS).unref();
    this.maybeExit();
  }

  private maybeExit(): void {
    if (this.isStopping && this.slots.size === 0) this.options.exit(this.exitCode);
  }
}
