// The debug listener: configuration and statistics dumps, heap snapshots and CPU profiles.
import http from 'node:http';
import { Session } from 'node:inspector';
import { getHeapSnapshot } from 'node:v8';
import type { ConfigSnapshot } from '../../config';
import type { StatsStore } from '../../stats';

export interface DebugSources {
  readonly snapshot: () => ConfigSnapshot | undefined;
  readonly stats: StatsStore;
  readonly health: () => Readonly<Record<string, boolean>>;
}

interface Endpoint {
  readonly help: string;
  readonly handle: (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void;
}

const MAX_PROFILE_SECONDS = 300;

function text(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

function cpuProfile(res: http.ServerResponse, seconds: number): void {
  const session = new Session();
  session.connect();
  const fail = (err: Error | null): boolean => {
    if (err === null) return false;
    session.disconnect();
    text(res, 500, `profiling failed: ${err.message}\n`);
    return true;
  };
  session.post('Profiler.enable', (enableErr) => {
    if (fail(enableErr)) return;
    session.post('Profiler.start', (startErr) => {
      if (fail(startErr)) return;
      const timer = setTimeout(() => {
        session.post('Profiler.stop', (stopErr, result) => {
          session.disconnect();
          if (stopErr !== null) {
            text(res, 500, `profiling failed: ${stopErr.message}\n`);
            return;
          }
          res.writeHead(200, {
            'Content-Type': 'application/json',
            'Content-Disposition': 'attachment; filename="ratelimit.cpuprofile"',
          });
          res.end(JSON.stringify(result.profile));
        });
      }, seconds * 1000);
      res.on('close', () => {
        if (!res.writableEnded) {
          clearTimeout(timer);
          session.disconnect();
        }
      });
    });
  });
}

/** The debug endpoints; `/` lists them. */
export function debugEndpoints(sources: DebugSources): Map<string, Endpoint> {
  const endpoints = new Map<string, Endpoint>();
  endpoints.set('/rlconfig', {
    help: 'print out the currently loaded configuration for debugging',
    handle: (_req, res) => {
      const snapshot = sources.snapshot();
      text(res, 200, snapshot === undefined ? '' : snapshot.dump());
    },
  });
  endpoints.set('/stats', {
    help: 'print out stats',
    handle: (_req, res) => {
      const { counters, gauges } = sources.stats.snapshot();
      const lines = [...counters, ...gauges]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, value]) => `${name}: ${value}\n`);
      text(res, 200, lines.join(''));
    },
  });
  endpoints.set('/healthcheck/components', {
    help: 'health of each component',
    handle: (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(sources.health()));
    },
  });
  endpoints.set('/debug/pprof/', {
    help: 'root of the profiling endpoints',
    handle: (_req, res) => {
      text(
        res,
        200,
        '/debug/pprof/heap: a V8 heap snapshot (open in Chrome DevTools, Memory tab)\n' +
          `/debug/pprof/profile?seconds=N: a CPU profile over N seconds (default 30, at most ${MAX_PROFILE_SECONDS}; open in Chrome DevTools)\n`,
      );
    },
  });
  endpoints.set('/debug/pprof/heap', {
    help: 'V8 heap snapshot',
    handle: (_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Content-Disposition': 'attachment; filename="ratelimit.heapsnapshot"',
      });
      getHeapSnapshot().pipe(res);
    },
  });
  endpoints.set('/debug/pprof/profile', {
    help: 'CPU profiling endpoint',
    handle: (_req, res, url) => {
      const requested = url.searchParams.get('seconds');
      const seconds = requested === null ? 30 : Number(requested);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
        text(res, 400, `seconds must be a number above 0 and at most ${MAX_PROFILE_SECONDS}\n`);
        return;
      }
      cpuProfile(res, seconds);
    },
  });
  return endpoints;
}

/** Builds the debug HTTP server; the caller listens. */
export function createDebugServer(sources: DebugSources): http.Server {
  const endpoints = debugEndpoints(sources);
  return http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://debug');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      text(res, 405, 'only GET is supported\n');
      return;
    }
    if (url.pathname === '/') {
      const lines = [...endpoints.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([path, e]) => `${path}: ${e.help}\n`);
      text(res, 200, lines.join(''));
      return;
    }
    const endpoint = endpoints.get(url.pathname);
    if (endpoint === undefined) {
      text(res, 404, `no such debug path: ${url.pathname}\n`);
      return;
    }
    endpoint.handle(req, res, url);
  });
}
