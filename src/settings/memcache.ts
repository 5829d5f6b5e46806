// Memcache section: the servers (a list or a DNS SRV name), connections, timeout and TLS.
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
  // Not a setting of the reference, whose client waits 500 ms: the same default here.
  TIMEOUT: duration('500ms'),
  ...clientTlsFields(),
});

/** `host:port` or `[ipv6]:port`, as the reference's client dials them. */
const HOST_PORT = /^(?:\[[^\]]+\]|[^:[\]\s]+):\d{1,5}$/;
/** The reference's reading of an SRV name: `_service._proto.name`. */
const SRV_NAME = /^_(.+?)\._(.+?)\.(.+)$/;

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

/** Each MEMCACHE_HOST_PORT entry, the SRV name's shape, the timeout and the TLS pair. */
function checkMemcacheValues(m: Values<typeof MEMCACHE>, problems: SettingsProblem[]): void {
  for (const entry of m.HOST_PORT) {
    const port = Number(/:(\d+)$/.exec(entry)?.[1] ?? 0);
    if (!HOST_PORT.test(entry) || port < 1 || port > 65535) {
      problems.push({
        setting: 'MEMCACHE_HOST_PORT',
        message: `${JSON.stringify(entry)} is not valid; accepted: a comma-separated list of host:port`,
      });
    }
  }
  if (m.SRV !== '' && !SRV_NAME.test(m.SRV)) {
    problems.push({
      setting: 'MEMCACHE_SRV',
      message: `${JSON.stringify(m.SRV)} is not valid; accepted: an SRV name _service._proto.name`,
    });
  }
  if (m.TIMEOUT <= 0) {
    problems.push({ setting: 'MEMCACHE_TIMEOUT', message: 'must be longer than 0' });
  }
  if (m.TLS && (m.TLS_CLIENT_CERT === '') !== (m.TLS_CLIENT_KEY === '')) {
    problems.push({
      setting: 'MEMCACHE_TLS_CLIENT_CERT',
      message:
        'MEMCACHE_TLS_CLIENT_CERT and MEMCACHE_TLS_CLIENT_KEY go together; set both or neither',
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
  checkMemcacheValues(m, problems);
  return deepFreeze({
    type: 'memcache',
    hostPorts: m.HOST_PORT,
    srv: optional(m.SRV),
    srvRefreshMs: m.SRV_REFRESH,
    maxIdleConns: m.MAX_IDLE_CONNS,
    timeoutMs: m.TIMEOUT,
    tls: clientTlsSettings(m),
  });
}
