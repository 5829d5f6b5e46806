// Backend section: BACKEND_TYPE chooses the counter store, whose own section reads its options.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { int, oneOf } from './fields';
import { checkMemcacheServers, memcacheBackendSettings, type MEMCACHE } from './memcache';
import {
  redisBackendSettings,
  type REDIS,
  type REDIS_COMMON,
  type REDIS_PER_SECOND,
} from './redis';
import { group, type Values } from './section';
import type { BackendSettings } from './types';

export const BACKEND = group('', {
  BACKEND_TYPE: oneOf('redis', ['redis', 'memcache', 'memory'], {
    altcache: 'memcache',
    kvstore: 'redis',
  }),
  // The memory backend's bound; when full, a new key evicts the key nearest its expiry.
  MEMORY_MAX_KEYS: int(1_000_000, 1),
});

/** The values of every section a backend reads. */
export interface BackendValues {
  readonly backend: Values<typeof BACKEND>;
  readonly redisCommon: Values<typeof REDIS_COMMON>;
  readonly redis: Values<typeof REDIS>;
  readonly redisPerSecond: Values<typeof REDIS_PER_SECOND>;
  readonly memcache: Values<typeof MEMCACHE>;
}

/** The chosen backend's settings; the others' are not read (the reference ignores them too). */
export function backendSettings(raw: BackendValues, problems: SettingsProblem[]): BackendSettings {
  checkMemcacheServers(raw.memcache, problems);
  switch (raw.backend.BACKEND_TYPE) {
    case 'memory':
      return deepFreeze({ type: 'memory', maxKeys: raw.backend.MEMORY_MAX_KEYS });
    case 'memcache':
      return memcacheBackendSettings(raw.memcache, problems);
    case 'redis':
      return redisBackendSettings(raw.redisCommon, raw.redis, raw.redisPerSecond, problems);
  }
}
