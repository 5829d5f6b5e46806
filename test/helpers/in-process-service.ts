// A service started inside the test runner, quiet: its logs and statistics would otherwise land
// in the runner's output. The statistics stay readable through service.stats.
import { silentLogger } from '../../src/lib/logger';
import { startService, type RunningService, type StartOptions } from '../../src/main';
import type { StatsSink } from '../../src/stats/sink';

const discard: StatsSink = {
  counter: () => undefined,
  gauge: () => undefined,
  timing: () => undefined,
  flush: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

export function startInProcess(options: StartOptions): Promise<RunningService> {
  return startService({ logger: silentLogger, statsSink: discard, ...options });
}
