// What a debug endpoint is, what the debug listener reads, and its plain-text and JSON answers.
import type http from 'node:http';
import type { RateLimitEngine } from '../../engine';
import type { QuotaView } from '../../quota';
import type { StatsSnapshot, StatsStore } from '../../stats';
import type { ConfigStatus } from '../config-status';
import type { HealthState } from '../health';

/** What the debug listener shows; read at each request. */
export interface DebugSources {
  readonly engine: Pick<RateLimitEngine, 'currentSnapshot' | 'readCounters' | 'recentDecisions'>;
  readonly stats: StatsStore;
  readonly health: Pick<HealthState, 'describe' | 'report'>;
  readonly config: Pick<ConfigStatus, 'current' | 'lastRefused' | 'xdsState'>;
  /**
   * With WORKERS above 1, every worker's statistics summed and how many workers answered, for
   * `/stats`; absent: this process's own.
   */
  readonly statsTotals?: () => Promise<{ snapshot: StatsSnapshot; workers: number }>;
  /** The RLQS service's state (`/rlqs`); absent: the endpoint is not served. */
  readonly quota?: () => QuotaView;
}

/** One path of the debug listener; `/` lists every path with its help. */
export interface Endpoint {
  readonly path: string;
  readonly help: string;
  readonly handle: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;
}

export function sendText(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

/** JSON, indented so that `curl` output reads well; never cached, as it is live state. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-store',
  });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

/** A refused query: the status and one sentence saying what was wrong. */
export function sendError(res: http.ServerResponse, status: number, reason: string): void {
  sendJson(res, status, { error: reason });
}

/** Unix milliseconds as an ISO 8601 time. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
