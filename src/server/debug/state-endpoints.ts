// Debug endpoints showing the service's state: loaded configuration, statistics, health.
import type http from 'node:http';
import type { StatsSnapshot } from '../../stats';
import { sendText, type DebugSources, type Endpoint } from './endpoint';

/**
 * `name: value` lines, sorted, as the reference prints them; `X-Ratelimit-Workers` says how
 * many workers' statistics they sum (1 without WORKERS).
 */
function sendStats(res: http.ServerResponse, { counters, gauges }: StatsSnapshot, workers: number) {
  const lines = [...counters, ...gauges]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}: ${value}\n`);
  res.setHeader('X-Ratelimit-Workers', String(workers));
  sendText(res, 200, lines.join(''));
}

function rlconfig(sources: DebugSources): Endpoint {
  return {
    path: '/rlconfig',
    help: 'print out the currently loaded configuration for debugging',
    handle: (_req, res) => {
      const snapshot = sources.engine.currentSnapshot;
      sendText(res, 200, snapshot === undefined ? '' : snapshot.dump());
    },
  };
}

function stats(sources: DebugSources): Endpoint {
  return {
    path: '/stats',
    help: 'print out stats',
    handle: (_req, res) => {
      const totals = sources.statsTotals;
      if (totals === undefined) {
        sendStats(res, sources.stats.snapshot(), 1);
        return;
      }
      // With WORKERS: every worker's, summed; this worker's alone if the supervisor is gone.
      totals().then(
        ({ snapshot, workers }) => {
          sendStats(res, snapshot, workers);
        },
        () => {
          sendStats(res, sources.stats.snapshot(), 1);
        },
      );
    },
  };
}

function healthComponents(sources: DebugSources): Endpoint {
  return {
    path: '/healthcheck/components',
    help: 'health of each component',
    handle: (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(sources.health.describe()));
    },
  };
}

export function stateEndpoints(sources: DebugSources): Endpoint[] {
  return [rlconfig(sources), stats(sources), healthComponents(sources)];
}
