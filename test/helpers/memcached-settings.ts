// The memcached backend's settings from environment-style overrides, for store tests.
import { loadSettings, type MemcacheBackendSettings } from '../../src/settings';

export function memcacheSettings(env: Record<string, string>): MemcacheBackendSettings {
  const settings = loadSettings({ BACKEND_TYPE: 'memcache', ...env });
  if (settings.backend.type !== 'memcache') throw new Error('expected memcache settings');
  return settings.backend;
}
