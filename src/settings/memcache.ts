// Memcache section: the servers (a list or a DNS SRV name), idle connections and TLS.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { duration, int, list, str } from './fields';
import { clientTlsFields, clientTlsSettings, group, optional, type Values } from './section';
import type { MemcacheBackendSettings } from './types';

export const MEMCACHE = group('MEMCACHE_', {
  HOST_PORT: list(),
  SRV: str(),
  SRV_REFRESH: duration('0'),
  MAX_IDLE_CONNS: int(2),
  ...clientTlsFields(),
});

/** The two ways to name the servers exclude each other, whichever backend is chosen. */
export function checkMemcacheServers(
  m: Values<typeof MEMCACHE>,
  problems: SettingsProblem[],
): void {
  if (m.HOST_PORT.length > 0 && m.SRV !== '') {
    problems.push({
      setting: 'MEMCACHE_HOST_PORT',
      message:
        'MEMCACHE_HOST_PORT and MEMCACHE_SRV are both set; they exclude each other: set only one',
    });
  }
}

/** The memcached backend; called only when BACKEND_TYPE chooses it. */
export function memcacheBackendSettings(
  m: Values<typeof MEMCACHE>,
  problems: SettingsProblem[],
): MemcacheBackendSettings {
  if (m.HOST_PORT.length === 0 && m.SRV === '') {
    problems.push({
      setting: 'MEMCACHE_HOST_PORT',
      message: 'BACKEND_TYPE is memcache but neither MEMCACHE_HOST_PORT nor MEMCACHE_SRV is set',
    });
  }
  return deepFreeze({
    type: 'memcache',
    hostPorts: m.HOST_PORT,
    srv: optional(m.SRV),
    srvRefreshMs: m.SRV_REFRESH,
    maxIdleConns: m.MAX_IDLE_CONNS,
    tls: clientTlsSettings(m),
  });
}
