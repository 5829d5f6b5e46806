// How a service process ends: drained on SIGTERM or SIGINT, when its supervisor goes away, or
// when the npm process that started it does.
import { readFileSync } from 'node:fs';
import { describeError } from './lib/errors';
import { writeProcessLine, type LogFormat } from './lib/logger';

/** Stops cleanly on SIGTERM or SIGINT; a worker also stops when its supervisor goes away. */
export function stopOnSignals(
  service: { stop(): Promise<void> },
  isWorker: boolean,
  format: LogFormat,
): void {
  if (isWorker) {
    // Without its supervisor a worker gets no more connections: drain and go.
    process.once('disconnect', () => {
      void service.stop().then(() => process.exit(0));
    });
  }
  const onSignal = (signal: NodeJS.Signals): void => {
    writeProcessLine(format, 'info', `${signal} received, draining`);
    stopAndExit(service, format);
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

function stopAndExit(service: { stop(): Promise<void> }, format: LogFormat): void {
  service.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      writeProcessLine(format, 'error', `error while stopping: ${describeError(err)}`);
      process.exit(1);
    },
  );
}

/** How often the service looks for the npm process that started it. */
const PARENT_CHECK_MS = 1000;

/** The parent of `pid` from /proc (Linux); undefined elsewhere or when it cannot be read. */
function parentOf(pid: number): number | undefined {
  try {
    // The command name, field 2, is in parentheses and may hold spaces: fields after it follow.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err: unknown) {
    return !(err instanceof Error && 'code' in err && err.code === 'ESRCH');
  }
}

/**
 * Started by npm (`npm run demo`, `npx ratelimit`: npm then runs `sh -c`, which runs node), the
 * service drains and exits once npm is gone. npm killed by its pid does not pass the signal on,
 * and the service would go on listening under another parent. Its parent and grandparent are
 * looked at once a second; nothing is done for a service started otherwise.
 */
export function stopWithNpm(
  service: { stop(): Promise<void> },
  isStartedByNpm: boolean,
  format: LogFormat,
): void {
  if (!isStartedByNpm) return;
  const parent = process.ppid;
  const grandparent = parentOf(parent);
  const timer = setInterval(() => {
    const isGone = process.ppid !== parent || (grandparent !== undefined && !isAlive(grandparent));
    if (!isGone) return;
    clearInterval(timer);
    writeProcessLine(format, 'info', 'the npm process that started this one is gone, draining');
    stopAndExit(service, format);
  }, PARENT_CHECK_MS);
  timer.unref();
}
