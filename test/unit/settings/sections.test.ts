// Settings sections: each reads its own group into its own frozen part; load.ts only assembles.
import { allSettingNames, loadSettings, type Settings } from '../../../src/settings';
import { backendSettings, BACKEND } from '../../../src/settings/backend';
import { readSchema } from '../../../src/settings/environment';
import type { SettingsProblem } from '../../../src/settings/errors';
import { MEMCACHE } from '../../../src/settings/memcache';
import {
  REDIS,
  REDIS_COMMON,
  REDIS_PER_SECOND,
  redisInstanceSettings,
} from '../../../src/settings/redis';
import { SCHEMA } from '../../../src/settings/schema';
import { SERVER, serverSettings } from '../../../src/settings/server';
import { STATS, statsSettings } from '../../../src/settings/stats';

function isDeepFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe('settings sections', () => {
  it('define every setting name once, across all sections', () => {
    const names = allSettingNames();
    expect(new Set(names).size).toBe(names.length);
    const fromGroups = Object.values(SCHEMA).flatMap((g) =>
      Object.keys(g.fields).map((field) => g.prefix + field),
    );
    expect(names).toEqual(fromGroups);
  });

  it('freeze every part of the settings they build', () => {
    const settings = loadSettings({
      USE_PROMETHEUS: 'true',
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_URL: 'h:2',
    });
    for (const part of Object.keys(settings) as (keyof Settings)[]) {
      expect({ part, frozen: isDeepFrozen(settings[part]) }).toEqual({ part, frozen: true });
    }
  });

  it('read only their own group: the server section refuses WORKERS with the memory backend', () => {
    const { values, problems } = readSchema({ WORKERS: '4', GRPC_PORT: '0' }, { server: SERVER });
    expect(problems).toEqual([]);
    const collected: SettingsProblem[] = [];
    const server = serverSettings(values.server, 'memory', collected);
    expect(server).toMatchObject({ workers: 4, grpc: { port: 0 } });
    expect(collected.map((p) => p.setting)).toEqual(['WORKERS']);
    expect(serverSettings(values.server, 'redis', [])).toMatchObject({ workers: 4 });
  });

  it('report a value that does not parse once, under the name it was given, and use the default', () => {
    const { values, problems } = readSchema({ KVSTORE_TIMEOUT: 'soon' }, { redis: REDIS });
    expect(problems).toEqual([
      {
        setting: 'KVSTORE_TIMEOUT',
        message:
          '"soon" is not valid; accepted: a duration such as 150us, 500ms, 10s, 1m30s or 24h (units ns, us, ms, s, m, h)',
      },
    ]);
    expect(values.redis.TIMEOUT).toBe(10_000);
  });

  it('build a Redis instance under either prefix with the same options', () => {
    const reading = readSchema(
      { REDIS_URL: 'main:1', REDIS_PERSECOND_URL: '/run/redis.sock', REDIS_PERSECOND_AUTH: 'u:p' },
      { redis: REDIS, perSecond: REDIS_PER_SECOND },
    );
    const problems: SettingsProblem[] = [];
    expect(redisInstanceSettings(reading.values.redis, 'REDIS_', problems)).toMatchObject({
      settingPrefix: 'REDIS_',
      socketType: 'tcp',
      url: 'main:1',
    });
    expect(
      redisInstanceSettings(reading.values.perSecond, 'REDIS_PERSECOND_', problems),
    ).toMatchObject({
      settingPrefix: 'REDIS_PERSECOND_',
      socketType: 'unix',
      auth: { kind: 'static', username: 'u', password: 'p' },
    });
    expect(problems).toEqual([]);
  });

  it('choose the backend by BACKEND_TYPE and leave the others unread', () => {
    const env = { BACKEND_TYPE: 'memory', REDIS_URL: 'not a url' };
    const { values } = readSchema(env, {
      backend: BACKEND,
      redisCommon: REDIS_COMMON,
      redis: REDIS,
      redisPerSecond: REDIS_PER_SECOND,
      memcache: MEMCACHE,
    });
    const problems: SettingsProblem[] = [];
    expect(backendSettings(values, problems)).toEqual({ type: 'memory', maxKeys: 1_000_000 });
    expect(problems).toEqual([]);
  });

  it('give the stats section the names a setting was given under', () => {
    const { values } = readSchema({ STATS_FLUSH_INTERVAL: '0s' }, { stats: STATS });
    const problems: SettingsProblem[] = [];
    statsSettings(
      values.stats,
      { env: {}, isStatsdExplicit: false, nameOf: (name) => `alias of ${name}` },
      problems,
    );
    expect(problems).toEqual([
      { setting: 'alias of STATS_FLUSH_INTERVAL', message: 'must be longer than 0' },
    ]);
  });
});
