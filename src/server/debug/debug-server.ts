// The debug listener: `/` names the service and lists the endpoints of state-endpoints.ts
// (configuration, statistics, health), operator-endpoints.ts and counters-endpoint.ts (JSON for
// operators) and profiling-endpoints.ts (heap snapshots, CPU profiles, served only with
// DEBUG_PROFILING_ENABLED=true). A browser asking for `/` gets the status page
// (web/status.html) instead, which reads the JSON endpoints.
import http from 'node:http';
import { SERVICE_NAME, SERVICE_VERSION } from '../../lib/version';
import { ASSET_PREFIX, acceptsHtml, loadWebAssets, sendAsset } from '../../lib/web-assets';
import type { LastResort } from '../last-resort';
import { parseTarget } from '../request-target';
import { countersEndpoint } from './counters-endpoint';
import { sendText, type DebugSources, type Endpoint } from './endpoint';
import { operatorEndpoints } from './operator-endpoints';
import { profilingEndpoints } from './profiling-endpoints';
import { quotaEndpoint } from './quota-endpoint';
import { stateEndpoints } from './state-endpoints';

export type { DebugSources } from './endpoint';

export interface DebugServerOptions {
  /** DEBUG_PROFILING_ENABLED: heap snapshots and CPU profiles hold memory contents. */
  readonly isProfilingEnabled: boolean;
  readonly lastResort: LastResort;
  /** Timeouts of the HTTP server (HEADER_TIMEOUT, IDLE_TIMEOUT). */
  readonly serverOptions?: http.ServerOptions;
}

/** The status page and the files it loads from ASSET_PREFIX. */
const PAGE = 'status.html';
const PAGE_FILES = [PAGE, 'common.css', 'common.js', 'status.js', 'status-quota.js'];

/** The index: the service and its version, then one `path: help` line per endpoint, sorted. */
function index(endpoints: ReadonlyMap<string, Endpoint>): string {
  const lines = [...endpoints.values()]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((e) => `${e.path}: ${e.help}\n`);
  return `${SERVICE_NAME} ${SERVICE_VERSION}\n${lines.join('')}`;
}

/** Builds the debug HTTP server; the caller listens. */
export function createDebugServer(sources: DebugSources, options: DebugServerOptions): http.Server {
  const endpoints = new Map(
    [
      ...stateEndpoints(sources),
      ...operatorEndpoints(sources),
      countersEndpoint(sources),
      ...profilingEndpoints(options.isProfilingEnabled),
      ...(sources.quota === undefined ? [] : [quotaEndpoint(sources.quota)]),
    ].map((e) => [e.path, e]),
  );
  const indexText = index(endpoints);
  const { assets } = loadWebAssets(PAGE_FILES);
  const page = assets.get(PAGE);
  const serve = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendText(res, 405, 'only GET is supported\n');
      return;
    }
    const url = parseTarget(req, 'http://debug');
    if (url === undefined) {
      sendText(res, 400, 'the request target is not a valid path\n');
      return;
    }
    if (url.pathname === '/') {
      if (page !== undefined && acceptsHtml(req)) sendAsset(req, res, page);
      else sendText(res, 200, indexText);
      return;
    }
    const asset = url.pathname.startsWith(ASSET_PREFIX)
      ? assets.get(url.pathname.slice(ASSET_PREFIX.length))
      : undefined;
    if (asset !== undefined) {
      sendAsset(req, res, asset);
      return;
    }
    const endpoint = endpoints.get(url.pathname);
    if (endpoint === undefined) {
      sendText(res, 404, `no such debug path: ${url.pathname}\n`);
      return;
    }
    endpoint.handle(req, res, url);
  };
  return http.createServer(options.serverOptions ?? {}, (req, res) => {
    options.lastResort.guard(
      'debug listener',
      () => {
        serve(req, res);
      },
      () => {
        if (!res.headersSent) sendText(res, 500, 'internal error\n');
        else res.destroy();
      },
    );
  });
}
