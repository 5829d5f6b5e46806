// LOG_FORMAT=json covers every line the service writes, not only its logger's: the start, a
// fatal start-up error (a port in use, a refused setting), the signal and the stop, with one
// process (WORKERS=1) and with a supervisor and its workers (WORKERS=2), whose lines share the
// standard error. A log pipeline that parses each line as JSON then loses none.
import { collectCleanups } from '../helpers/cleanups';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
let redis: RedisServer;
let runtime: RuntimeDir;

beforeAll(async () => {
  redis = await RedisServer.start();
  cleanup(() => redis.stop());
  runtime = new RuntimeDir({
    'j.yaml':
      'domain: j\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  });
  cleanup(() => {
    runtime.destroy();
  });
});

function jsonEnv(workers: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...runtime.env(),
    BACKEND_TYPE: 'redis',
    REDIS_URL: `127.0.0.1:${redis.port}`,
    WORKERS: String(workers),
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'debug',
    // Statistics go to the scrape: with no sink chosen they would be statsd lines on standard
    // output, a statistics sink of its own (docs/observability.md), not log lines.
    USE_STATSD: 'false',
    USE_PROMETHEUS: 'true',
    PROMETHEUS_ADDR: '127.0.0.1:0',
    ...extra,
  };
}

interface Line {
  readonly '@timestamp': string;
  readonly level: string;
  readonly '@message': string;
}

/** Every line of `output`, each parsed as a log line; one that is not names itself. */
function parsedLines(output: string): Line[] {
  const lines = output.split('\n').filter((line) => line !== '');
  return lines.map((line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`a line that is not JSON: ${line}\n--- all output ---\n${output}`);
    }
    const fields = parsed as Partial<Line>;
    if (
      typeof fields['@message'] !== 'string' ||
      typeof fields.level !== 'string' ||
      Number.isNaN(Date.parse(String(fields['@timestamp'])))
    )
      throw new Error(`a JSON line without @timestamp, level and @message: ${line}`);
    return parsed as Line;
  });
}

describe.each([1, 2])('LOG_FORMAT=json with WORKERS=%i', (workers) => {
  it('writes every line of a start, a fatal error and a stop as JSON', async () => {
    const service = await ServiceProcess.start({ env: jsonEnv(workers) });
    cleanup(() => service.stop());
    // Healthy as soon as one worker answers: the stop below is of a pod whose workers all run
    // (a SIGTERM while a worker still starts ends the pod with 1: not what this test is about).
    if (workers > 1) await service.logged('"workers listening"');

    // A second service on the first one's HTTP port cannot listen and stops at start-up.
    const taken = await ServiceProcess.start({
      env: jsonEnv(workers, { PORT: String(service.ports.http) }),
      waitFor: 'nothing',
    });
    cleanup(() => taken.stop());
    expect(await taken.waitForExit()).toBe(1);
    const fatal = parsedLines(taken.logs).filter((l) => l.level === 'fatal');
    expect(fatal.map((l) => l['@message']).join('\n')).toMatch(/EADDRINUSE/);

    expect(await service.signal('SIGTERM')).toBe(0);
    const lines = parsedLines(service.logs);
    const messages = lines.map((l) => l['@message']);
    expect(messages).toContain('listening');
    expect(messages).toContain(
      workers === 1 ? 'SIGTERM received, draining' : 'SIGTERM received, stopping the workers',
    );
    if (workers > 1) expect(messages).toContain('workers listening');
  });
});

it('writes a refused setting as one JSON line, naming the setting', async () => {
  const refused = await ServiceProcess.start({
    env: jsonEnv(1, { PORT: 'eighty' }),
    waitFor: 'nothing',
  });
  cleanup(() => refused.stop());
  expect(await refused.waitForExit()).toBe(1);
  const lines = parsedLines(refused.logs);
  expect(lines).toHaveLength(1);
  expect(lines[0]?.level).toBe('fatal');
  expect(lines[0]?.['@message']).toMatch(/PORT/);
});
