// Debug endpoints for profiling, at the paths of Go's pprof: V8 heap snapshots and CPU profiles.
// A heap snapshot holds every string in memory (the Redis password, request values), unlike
// Go's heap profile: both are served only with DEBUG_PROFILING_ENABLED=true, one at a time.
import type http from 'node:http';
import { Session } from 'node:inspector';
import { getHeapSnapshot } from 'node:v8';
import { sendText, type Endpoint } from './endpoint';

/** The longest CPU profile; a profile slows every request while it runs. */
export const MAX_PROFILE_SECONDS = 60;

const OFF_MESSAGE =
  'profiling is off: heap snapshots and CPU profiles hold memory contents such as credentials; ' +
  'start the service with DEBUG_PROFILING_ENABLED=true to serve them\n';

/** Profiles the CPU for `seconds`, then answers with the profile; a closed request stops it. */
function cpuProfile(res: http.ServerResponse, seconds: number, done: () => void): void {
  const session = new Session();
  session.connect();
  let isDone = false;
  const finish = (): void => {
    if (isDone) return;
    isDone = true;
    session.disconnect();
    done();
  };
  const fail = (err: Error | null): boolean => {
    if (err === null) return false;
    finish();
    sendText(res, 500, `profiling failed: ${err.message}\n`);
    return true;
  };
  session.post('Profiler.enable', (enableErr) => {
    if (fail(enableErr)) return;
    session.post('Profiler.start', (startErr) => {
      if (fail(startErr)) return;
      const timer = setTimeout(() => {
        session.post('Profiler.stop', (stopErr, result) => {
          if (fail(stopErr)) return;
          finish();
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
          finish();
        }
      });
    });
  });
}

/** One profile or snapshot at a time: each costs the whole process while it runs. */
class ProfilingSlot {
  private isBusy = false;

  /** Runs `start` with a release function, or answers 409 while another one runs. */
  take(res: http.ServerResponse, start: (release: () => void) => void): void {
    if (this.isBusy) {
      sendText(res, 409, 'another profile or heap snapshot is being taken; try again later\n');
      return;
    }
    this.isBusy = true;
    start(() => {
      this.isBusy = false;
    });
  }
}

function off(path: string, help: string): Endpoint {
  return {
    path,
    help: `${help} (off: DEBUG_PROFILING_ENABLED)`,
    handle: (_req, res) => {
      sendText(res, 403, OFF_MESSAGE);
    },
  };
}

function pprofIndex(isEnabled: boolean): Endpoint {
  return {
    path: '/debug/pprof/',
    help: 'root of the profiling endpoints',
    handle: (_req, res) => {
      sendText(
        res,
        200,
        (isEnabled ? '' : OFF_MESSAGE) +
          '/debug/pprof/heap: a V8 heap snapshot (open in Chrome DevTools, Memory tab)\n' +
          `/debug/pprof/profile?seconds=N: a CPU profile over N seconds (default 30, at most ${MAX_PROFILE_SECONDS}; open in Chrome DevTools)\n`,
      );
    },
  };
}

function heap(slot: ProfilingSlot): Endpoint {
  return {
    path: '/debug/pprof/heap',
    help: 'V8 heap snapshot',
    handle: (_req, res) => {
      slot.take(res, (release) => {
        res.on('close', release);
        res.writeHead(200, {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': 'attachment; filename="ratelimit.heapsnapshot"',
        });
        getHeapSnapshot().pipe(res);
      });
    },
  };
}

function profile(slot: ProfilingSlot): Endpoint {
  return {
    path: '/debug/pprof/profile',
    help: 'CPU profiling endpoint',
    handle: (_req, res, url) => {
      const requested = url.searchParams.get('seconds');
      const seconds = requested === null ? 30 : Number(requested);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_PROFILE_SECONDS) {
        sendText(res, 400, `seconds must be a number above 0 and at most ${MAX_PROFILE_SECONDS}\n`);
        return;
      }
      slot.take(res, (release) => {
        cpuProfile(res, seconds, release);
      });
    },
  };
}

/** The profiling endpoints; with profiling off they answer 403 saying how to turn it on. */
export function profilingEndpoints(isEnabled: boolean): readonly Endpoint[] {
  if (!isEnabled) {
    return [
      pprofIndex(false),
      off('/debug/pprof/heap', 'V8 heap snapshot'),
      off('/debug/pprof/profile', 'CPU profiling endpoint'),
    ];
  }
  const slot = new ProfilingSlot();
  return [pprofIndex(true), heap(slot), profile(slot)];
}
