// The Prometheus scrape endpoint (PROMETHEUS_ADDR, PROMETHEUS_PATH).
import http from 'node:http';
import { describeError } from '../../lib/errors';

export interface MetricsSource {
  /** The exposition text, brought up to date first. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Builds the scrape server; the caller listens. */
export function createMetricsServer(path: string, source: MetricsSource): http.Server {
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://metrics');
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
    source.render().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'Content-Type': contentType });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`cannot render metrics: ${describeError(err)}\n`);
      },
    );
  });
}
