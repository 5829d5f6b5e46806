// The simulator's HTTP admin: see what clients did, push configurations, cause trouble.
import http from 'node:http';
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

/**
 * GET /status: versions, resources and every node with its last ACK and NACK.
 * POST /push?name=N (YAML body): add or replace a resource. DELETE /push?name=N: drop it.
 * POST /disconnect: end every stream. POST /bad-resource, DELETE /bad-resource.
 */
export function createAdmin(server: ManagementServer, state: AdminState): http.Server {
  const publish = (): void => {
    server.setResources(currentResources(state));
  };
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    const name = url.searchParams.get('name');
    const handle = async (): Promise<void> => {
      switch (route) {
        case 'GET /status':
          json(res, 200, server.status());
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
          json(res, 404, {
            error: `no route ${route}; see GET /status, POST /push, POST /disconnect, POST|DELETE /bad-resource`,
          });
      }
    };
    handle().catch((err: unknown) => {
      json(res, 400, { error: err instanceof Error ? err.message : String(err) });
    });
  });
}
