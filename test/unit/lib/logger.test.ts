// Log lines in the reference's text and JSON shapes, filtered by level.
import { PassThrough } from 'node:stream';
import { createLogger, type LogFormat, type LogLevel } from '../../../src/lib/logger';

async function lines(
  level: LogLevel,
  format: LogFormat,
  write: (log: ReturnType<typeof createLogger>) => void,
): Promise<string[]> {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const log = createLogger({ level, format, stream });
  write(log);
  await new Promise((resolve) => setImmediate(resolve));
  return text.split('\n').filter((l) => l !== '');
}

it('writes text lines with time, level and msg, and the fields after', async () => {
  const out = await lines('info', 'text', (log) => {
    log.info('loaded a new configuration', { domains: 'a,b', count: 2 });
  });
  expect(out).toHaveLength(1);
  expect(out[0]).toMatch(
    /^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=info msg="loaded a new configuration" domains="a,b" count=2$/,
  );
});

it('writes JSON lines with @timestamp, level and @message', async () => {
  const out = await lines('debug', 'json', (log) => {
    log.warn('cannot connect', { target: 'tcp localhost:6379' });
  });
  const parsed = JSON.parse(out[0] ?? '') as Record<string, unknown>;
  expect(parsed).toEqual({
    '@timestamp': expect.any(String) as unknown,
    level: 'warning',
    '@message': 'cannot connect',
    target: 'tcp localhost:6379',
  });
});

it('drops lines below the level and says whether debug is on', async () => {
  let isDebug = true;
  const out = await lines('warning', 'text', (log) => {
    isDebug = log.isDebugEnabled;
    log.debug('hidden');
    log.info('hidden too');
    log.warn('shown');
    log.error('shown too');
  });
  expect(isDebug).toBe(false);
  expect(out.map((l) => /msg="([^"]*)"/.exec(l)?.[1])).toEqual(['shown', 'shown too']);
});
