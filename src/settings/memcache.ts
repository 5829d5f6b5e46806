// The memcache section: MEMCACHE_* (alias ALTCACHE_*) validated into MemcacheBackendSettings.
import type { SettingsProblem } from './errors';
import type { RawSettings } from './schema';
import type { MemcacheBackendSettings } from './types';

/** `host:port` or `[ipv6]:port`, as the reference's client dials them. */
const HOST_PORT = /^(?:\[[^\]]+\]|[^:[\]\s]+):\d{1,5}$/;
/** The reference's reading of an SRV name: `_service._proto.name`. */
const SRV_NAME = /^_(.+?)\._(.+?)\.(.+)$/;

function optional(text: string): string | undefined {
  return text === '' ? undefined : text;
}

/** Problems of the MEMCACHE_* settings that hold whichever backend is chosen. */
export function memcacheExclusions(m: RawSettings['memcache'], problems: SettingsProblem[]): void {
  if (m.HOST_PORT.length > 0 && m.SRV !== '') {
    problems.push({
      setting: 'MEMCACHE_HOST_PORT',
      message:
        'MEMCACHE_HOST_PORT and MEMCACHE_SRV are both set; they exclude each other: set only one',
    });
  }
}

/** The memcached backend's settings, adding every problem found to `problems`. */
export function memcacheBackend(
  m: RawSettings['memcache'],
  problems: SettingsProblem[],
): MemcacheBackendSettings {
  if (m.HOST_PORT.length === 0 && m.SRV === '') {
    problems.push({
      setting: 'MEMCACHE_HOST_PORT',
      message: 'BACKEND_TYPE is memcache but neither MEMCACHE_HOST_PORT nor MEMCACHE_SRV is set',
    });
  }
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
  return {
    type: 'memcache',
    hostPorts: m.HOST_PORT,
    srv: optional(m.SRV),
    srvRefreshMs: m.SRV_REFRESH,
    maxIdleConns: m.MAX_IDLE_CONNS,
    timeoutMs: m.TIMEOUT,
    tls: m.TLS
      ? {
          certFile: optional(m.TLS_CLIENT_CERT),
          keyFile: optional(m.TLS_CLIENT_KEY),
          caFile: optional(m.TLS_CACERT),
          serverName: undefined,
          skipHostnameVerification: m.TLS_SKIP_HOSTNAME_VERIFICATION,
        }
      : undefined,
  };
}
