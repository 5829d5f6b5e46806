// The memcache settings section: what it accepts, and every refusal with its exact message.
import { loadSettings, SettingsError } from '../../../src/settings';

function problems(env: Record<string, string>): string[] {
  try {
    loadSettings({ BACKEND_TYPE: 'memcache', ...env });
  } catch (err: unknown) {
    if (err instanceof SettingsError) return err.problems.map((p) => `${p.setting}: ${p.message}`);
    throw err;
  }
  return [];
}

describe('memcache settings', () => {
  it('reads a server list, an SRV name with its refresh, connections and TLS files', () => {
    expect(
      loadSettings({
        BACKEND_TYPE: 'memcache',
        MEMCACHE_SRV: '_memcache._tcp.cache.example',
        MEMCACHE_SRV_REFRESH: '30s',
        MEMCACHE_MAX_IDLE_CONNS: '4',
        MEMCACHE_TIMEOUT: '250ms',
        MEMCACHE_TLS: 'true',
        MEMCACHE_TLS_CACERT: '/ca.pem',
        MEMCACHE_TLS_CLIENT_CERT: '/c.pem',
        MEMCACHE_TLS_CLIENT_KEY: '/k.pem',
        MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
      }).backend,
    ).toEqual({
      type: 'memcache',
      hostPorts: [],
      srv: '_memcache._tcp.cache.example',
      srvRefreshMs: 30_000,
      maxIdleConns: 4,
      timeoutMs: 250,
      tls: {
        caFile: '/ca.pem',
        certFile: '/c.pem',
        keyFile: '/k.pem',
        serverName: undefined,
        skipHostnameVerification: true,
      },
    });
    expect(
      loadSettings({ BACKEND_TYPE: 'memcache', MEMCACHE_HOST_PORT: 'a:11211,[::1]:11212' }).backend,
    ).toMatchObject({ hostPorts: ['a:11211', '[::1]:11212'], srv: undefined });
  });

  it.each([
    [
      {},
      'MEMCACHE_HOST_PORT: BACKEND_TYPE is memcache but neither MEMCACHE_HOST_PORT nor MEMCACHE_SRV is set',
    ],
    [
      { MEMCACHE_HOST_PORT: 'a:1', MEMCACHE_SRV: '_m._tcp.x' },
      'MEMCACHE_HOST_PORT: MEMCACHE_HOST_PORT and MEMCACHE_SRV are both set; they exclude each other: set only one',
    ],
    [
      { MEMCACHE_HOST_PORT: 'a:1,nohost' },
      'MEMCACHE_HOST_PORT: "nohost" is not valid; accepted: a comma-separated list of host:port',
    ],
    [
      { MEMCACHE_HOST_PORT: 'a:70000' },
      'MEMCACHE_HOST_PORT: "a:70000" is not valid; accepted: a comma-separated list of host:port',
    ],
    [
      { MEMCACHE_HOST_PORT: 'a:1', MEMCACHE_TIMEOUT: '0' },
      'MEMCACHE_TIMEOUT: must be longer than 0',
    ],
    [
      { MEMCACHE_SRV: 'cache.example' },
      'MEMCACHE_SRV: "cache.example" is not valid; accepted: an SRV name _service._proto.name',
    ],
    [
      { MEMCACHE_HOST_PORT: 'a:1', MEMCACHE_TLS: 'true', MEMCACHE_TLS_CLIENT_CERT: '/c.pem' },
      'MEMCACHE_TLS_CLIENT_CERT: MEMCACHE_TLS_CLIENT_CERT and MEMCACHE_TLS_CLIENT_KEY go together; set both or neither',
    ],
  ])('refuses %j', (env, message) => {
    expect(problems(env)).toEqual([message]);
  });

  it('reads the ALTCACHE_ spelling as MEMCACHE_', () => {
    expect(problems({ ALTCACHE_SRV: 'nope' })).toEqual([
      'MEMCACHE_SRV: "nope" is not valid; accepted: an SRV name _service._proto.name',
    ]);
  });
});
