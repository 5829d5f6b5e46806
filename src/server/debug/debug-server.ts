// The debug listener: `/` names the service and lists the endpoints of state-endpoints.ts
// (configuration, statistics, health) and profiling-endpoints.ts (heap snapshots, CPU profiles).
import http from 'node:http';
import { SERVICE_NAME, SERVICE_VERSION } from '../../lib/version';
import { sendText, type DebugSources, type Endpoint } from './endpoint';
import { PROFILING_ENDPOINTS } from './profiling-endpoints';
import { stateEndpoints } from './state-endpoints';

export type { DebugSources } from './endpoint';

/** The index: the service and its version, then one `path: help` line per endpoint, sorted. */
function index(endpoints: ReadonlyMap<string, Endpoint>): string {
  const lines = [...endpoints.values()]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((e) => `${e.path}: ${e.help}\n`);
  return `${SERVICE_NAME} ${SERVICE_VERSION}\n${lines.join('')}`;
}

/** Builds the debug HTTP server; the caller listens. */
export function createDebugServer(sources: DebugSources): http.Server {
  const endpoints = new Map(
    [...stateEndpoints(sources), ...PROFILING_ENDPOINTS].map((e) => [e.path, e]),
  );
  const indexText = index(endpoints);
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://debug');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendText(res, 405, 'only GET is supported\n');
      return;
    }
    if (url.pathname === '/') {
      sendText(res, 200, indexText);
      return;
    }
    const endpoint = endpoints.get(url.pathname);
    if (endpoint === undefined) {
      sendText(res, 404, `no such debug path: ${url.pathname}\n`);
      return;
    }
    endpoint.handle(req, res, url);
  });
}
