// Log levels as operators expect: a clean start (connecting, listening, loading) is info, so the
// default level (warning) is quiet until something needs attention.
import { collectCleanups } from '../helpers/cleanups';
import { RedisServer } from '../helpers/redis-server';
import { RuntimeDir } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();

/** Each log line's level and message, in the JSON format. */
function lines(logs: string): { level: string; message: string }[] {
  return logs
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; '@message': string })
    .map((l) => ({ level: l.level, message: l['@message'] }));
}

it('logs a clean start on Redis at info, with no warning or error', async () => {
  const redis = await RedisServer.start();
  cleanup(() => redis.destroy());
  const runtime = new RuntimeDir({
    'd.yaml':
      'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
  });
  cleanup(() => {
    runtime.destroy();
  });
  const service = await ServiceProcess.start({
    env: { ...runtime.env(), REDIS_URL: `127.0.0.1:${redis.port}`, LOG_FORMAT: 'json' },
  });
  cleanup(() => service.stop());
  const logged = lines(service.logs);
  const levelOf = (message: string): string | undefined =>
    logged.find((l) => l.message === message)?.level;
  expect({
    connecting: levelOf('connecting to redis'),
    connected: levelOf('connected to redis'),
    loaded: levelOf('loaded a new configuration'),
    listening: levelOf('listening'),
  }).toEqual({ connecting: 'info', connected: 'info', loaded: 'info', listening: 'info' });
  expect(logged.filter((l) => l.level !== 'info' && l.level !== 'debug')).toEqual([]);
});
