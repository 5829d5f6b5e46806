// The simulator's HTTP admin: see what clients did, push configurations, cause trouble; the
// same as a page at / (web/sim.html) for a browser.
import http from 'node:http';
import { ASSET_PREFIX, acceptsHtml, loadWebAssets, sendAsset } from '../../src/lib/web-assets';
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

const ROUTES =
  'GET /status, POST /push?name=N, DELETE /push?name=N, POST /republish, POST /disconnect, POST|DELETE /bad-resource';

/** The admin page and the files it loads from ASSET_PREFIX. */
const PAGE = 'sim.html';
const PAGE_FILES = [PAGE, 'common.css', 'sim.js'];

/**
 * GET /status: versions, resources and every node with its last ACK and NACK.
 * POST /push?name=N (YAML body): add or replace a resource. DELETE /push?name=N: drop it.
 * POST /republish: read the directory again and publish it as a new version.
 * POST /disconnect: end every stream. POST /bad-resource, DELETE /bad-resource.
 * GET / in a browser: the same as a page.
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
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const name = url.searchParams.get('name');
    const asset =
      req.method === 'GET' && url.pathname.startsWith(ASSET_PREFIX)
        ? assets.get(url.pathname.slice(ASSET_PREFIX.length))
        : undefined;
    if (asset !== undefined) {
      sendAsset(req, res, asset);
      return;
    }
    const handle = async (): Promise<void> => {
      switch (route) {
        case 'GET /': {
          const page = assets.get(PAGE);
          if (page !== undefined && acceptsHtml(req)) sendAsset(req, res, page);
          else json(res, 200, { routes: ROUTES });
          return;
        }
        case 'GET /status':
          json(res, 200, {
            ...server.status(),
            pushed: [...state.pushed.keys()],
            isBadResourceOn: state.isBadResourceOn,
          });
          return;
        case 'POST /republish':
          rereadDirectory();
          json(res, 200, { version: server.version });
          return;
        case 'POST /push': {
          if (name === null || name === '') {
            json(res, 400, {
              error: 'name is required: POST /push?name=<resource name> with a YAML body',
            });
            return;
          }
          state.pushed.set(name, resourceFromYaml(name, await readBody(req)));
          publish();
          json(res, 200, { version: server.version });
          return;
        }
        case 'DELETE /push':
          state.pushed.delete(name ?? '');
          publish();
          json(res, 200, { version: server.version });
          return;
        case 'POST /disconnect':
          json(res, 200, { disconnected: server.disconnectAll() });
          return;
        case 'POST /bad-resource':
        case 'DELETE /bad-resource':
          state.isBadResourceOn = req.method === 'POST';
          publish();
          json(res, 200, { version: server.version });
          return;
        default:
          json(res, 404, { error: `no route ${route}; see ${ROUTES}` });
      }
    };
    handle().catch((err: unknown) => {
      json(res, 400, { error: err instanceof Error ? err.message : String(err) });
    });
  });
}
