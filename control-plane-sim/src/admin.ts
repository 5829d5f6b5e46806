// The simulator's HTTP admin: see what clients did, push configurations, cause trouble; the
// same as a page at / (web/sim.html) for a browser.
import http from 'node:http';
import {
  ASSET_PREFIX,
  acceptsHtml,
  loadWebAssets,
  sendAsset,
  type WebAsset,
} from '../../src/lib/web-assets';
import { resourceFromYaml, type Resource } from './config-files';
import type { ManagementServer } from './management-server';

export interface AdminState {
  /** The resources from the watched directory. */
  directory: readonly Resource[];
  /** Resources pushed through the admin API, by name; they win over files of the same name. */
  readonly pushed: Map<string, Resource>;
  /** Whether a bad resource is added to every version. */
  isBadResourceOn: boolean;
}

/** The set the server should serve now. */
export function currentResources(state: AdminState): Resource[] {
  const byName = new Map<string, Resource>();
  for (const r of state.directory) byName.set(r.name, r);
  for (const [name, r] of state.pushed) byName.set(name, r);
  const resources = [...byName.values()];
  if (state.isBadResourceOn) {
    // A rule without a unit, which the service's validation refuses: the whole update is NACKed.
    resources.push(
      resourceFromYaml(
        'bad-resource',
        'domain: bad\ndescriptors:\n  - key: k\n    rate_limit: { requests_per_unit: 1 }\n',
      ),
    );
  }
  return resources;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      resolve(body);
    });
    req.on('error', reject);
  });
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

/** The admin page and the files it loads from ASSET_PREFIX. */
const PAGE = 'sim.html';
const PAGE_FILES = [PAGE, 'common.css', 'common.js', 'sim.js'];

/** What a route reads: the request, its query, and what it may change. */
interface RouteContext {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly name: string | null;
  readonly server: ManagementServer;
  readonly state: AdminState;
  /** Publishes the current set as a new version. */
  readonly publish: () => void;
  readonly rereadDirectory: () => void;
  readonly page: WebAsset | undefined;
}

type Route = (c: RouteContext) => void | Promise<void>;

const version = (c: RouteContext): void => {
  json(c.res, 200, { version: c.server.version });
};

/** Routes by `METHOD /path`. */
const ROUTES: Readonly<Record<string, Route>> = {
  'GET /': (c) => {
    if (c.page !== undefined && acceptsHtml(c.req)) sendAsset(c.req, c.res, c.page);
    else json(c.res, 200, { routes: Object.keys(ROUTES) });
  },
  'GET /status': (c) => {
    json(c.res, 200, {
      ...c.server.status(),
      pushed: [...c.state.pushed.keys()],
      isBadResourceOn: c.state.isBadResourceOn,
    });
  },
  'POST /republish': (c) => {
    c.rereadDirectory();
    version(c);
  },
  'POST /push': async (c) => {
    if (c.name === null || c.name === '') {
      json(c.res, 400, {
        error: 'name is required: POST /push?name=<resource name> with a YAML body',
      });
      return;
    }
    c.state.pushed.set(c.name, resourceFromYaml(c.name, await readBody(c.req)));
    c.publish();
    version(c);
  },
  'DELETE /push': (c) => {
    c.state.pushed.delete(c.name ?? '');
    c.publish();
    version(c);
  },
  'POST /disconnect': (c) => {
    json(c.res, 200, { disconnected: c.server.disconnectAll() });
  },
  'POST /bad-resource': (c) => {
    c.state.isBadResourceOn = true;
    c.publish();
    version(c);
  },
  'DELETE /bad-resource': (c) => {
    c.state.isBadResourceOn = false;
    c.publish();
    version(c);
  },
};

/**
 * GET /status: versions, resources and every node with its last ACK and NACK.
 * POST /push?name=N (YAML body): add or replace a resource. DELETE /push?name=N: drop it.
 * POST /republish: read the directory again and publish it as a new version.
 * POST /disconnect: end every stream. POST /bad-resource, DELETE /bad-resource.
 * GET / in a browser: the same as a page, whose files are under ASSET_PREFIX.
 */
export function createAdmin(
  server: ManagementServer,
  state: AdminState,
  rereadDirectory: () => void,
): http.Server {
  const publish = (): void => {
    server.setResources(currentResources(state));
  };
  const { assets } = loadWebAssets(PAGE_FILES);
  const page = assets.get(PAGE);
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const asset =
      req.method === 'GET' && url.pathname.startsWith(ASSET_PREFIX)
        ? assets.get(url.pathname.slice(ASSET_PREFIX.length))
        : undefined;
    if (asset !== undefined) {
      sendAsset(req, res, asset);
      return;
    }
    const key = `${req.method ?? 'GET'} ${url.pathname}`;
    const route = ROUTES[key];
    if (route === undefined) {
      json(res, 404, { error: `no route ${key}; see ${Object.keys(ROUTES).join(', ')}` });
      return;
    }
    const name = url.searchParams.get('name');
    const context = { req, res, name, server, state, publish, rereadDirectory, page };
    Promise.resolve()
      .then(() => route(context))
      .catch((err: unknown) => {
        json(res, 400, { error: err instanceof Error ? err.message : String(err) });
      });
  });
}
