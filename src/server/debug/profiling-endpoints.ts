// Debug endpoints for profiling, at the paths of Go's pprof: V8 heap snapshots and CPU profiles.
import type http from 'node:http';
import { Session } from 'node:inspector';
import { getHeapSnapshot } from 'node:v8';
import { sendText, type Endpoint } from './endpoint';

const MAX_PROFILE_SECONDS = 300;

/** Profiles the CPU for `seconds`, then answers with the profile; a closed request stops it. */
function cpuProfile(res: http.ServerResponse, seconds: number): void {
  const session = new Session();
  session.connect();
  const fail = (err: Error | null): boolean => {
    if (err === null) return false;
    session.disconnect();
    sendText(res, 500, `profiling failed: ${err.message}\n`);
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
            sendText(res, 500, `profiling failed: ${stopErr.message}\n`);
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

const pprofIndex: Endpoint = {
  path: '/debug/pprof/',
  help: 'root of the profiling endpoints',
  handle: (_req, res) => {
    sendText(
      res,
      200,
      '/debug/pprof/heap: a V8 heap snapshot (open in Chrome DevTools, Memory tab)\n' +
        `/debug/pprof/profile?seconds=N: a CPU profile over N seconds (default 30, at most ${MAX_PROFILE_SECONDS}; open in Chrome DevTools)\n`,
    );
  },
};

const heap: Endpoint = {
  path: '/debug/pprof/heap',
  help: 'V8 heap snapshot',
  handle: (_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': 'attachment; filename="ratelimit.heapsnapshot"',
    });
    getHeapSnapshot().pipe(res);
  },
};

const profile: Endpoint = {
  path: '/debug/pprof/profile',
  help: 'CPU profiling endpoint',
  handle: (_req, res, url) => {
    const requested = url.searchParams.get('seconds');
    const seconds = requested === null ? 30 : Number(requested);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
      sendText(res, 400, `seconds must be a number above 0 and at most ${MAX_PROFILE_SECONDS}\n`);
      return;
    }
    cpuProfile(res, seconds);
  },
};

export const PROFILING_ENDPOINTS: readonly Endpoint[] = Object.freeze([pprofIndex, heap, profile]);
