// The Prometheus scrape endpoint (PROMETHEUS_ADDR, PROMETHEUS_PATH).
import http from 'node:http';
import { describeError } from '../../lib/errors';
import type { LastResort } from '../last-resort';
import { parseTarget } from '../request-target';

export interface MetricsSource {
  /** The exposition text, brought up to date first. */
  render(): Promise<{ contentType: string; body: string }>;
}

function sendText(res: http.ServerResponse, status: number, body: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

/**
 * Builds the scrape server; the caller listens. Without `lastResort` (the supervisor of
 * WORKERS, which has no statistics of its own) an unexpected error is only answered 500.
 */
export function createMetricsServer(
  path: string,
  source: MetricsSource,
  options: {
    readonly serverOptions?: http.ServerOptions;
    readonly lastResort?: LastResort | undefined;
  } = {},
): http.Server {
  const { lastResort } = options;
  const unexpected = (res: http.ServerResponse) => (err: unknown) => {
    lastResort?.report(err, 'metrics listener');
    sendText(res, 500, 'internal error\n');
  };
  return http.createServer(options.serverOptions ?? {}, (req, res) => {
    try {
      serve(req, res, path, source, unexpected(res));
    } catch (err: unknown) {
      unexpected(res)(err);
    }
  });
}

function serve(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  path: string,
  source: MetricsSource,
  unexpected: (err: unknown) => void,
): void {
  const url = parseTarget(req, 'http://metrics');
  if (url === undefined) {
    sendText(res, 400, 'the request target is not a valid path\n');
    return;
  }
  if (url.pathname !== path) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`no such path: ${url.pathname}; metrics are at ${path}\n`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'GET' });
    res.end('only GET is supported\n');
    return;
  }
  source
    .render()
    .then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'Content-Type': contentType });
        res.end(body);
      },
      (err: unknown) => {
        sendText(res, 500, `cannot render metrics: ${describeError(err)}\n`);
      },
    )
    .catch(unexpected);
}
