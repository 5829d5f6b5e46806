// Debug endpoints showing the service's state: loaded configuration, statistics, health.
import { sendText, type DebugSources, type Endpoint } from './endpoint';

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
      const { counters, gauges } = sources.stats.snapshot();
      const lines = [...counters, ...gauges]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => `${name}: ${value}\n`);
      sendText(res, 200, lines.join(''));
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
