// TLS to Redis on a TLS-only server: what is accepted, what is refused with an error naming the
// setting to change (after the REDIS_STARTUP_* retries), and never a fallback to plain text.
import { MemoryLogger, silentLogger } from '../../../src/lib/logger';
import { RedisCounterStore, StoreError } from '../../../src/store';
import { makeCertificates, type Certificates } from '../../helpers/certs';
import { collectCleanups } from '../../helpers/cleanups';
import { eventually } from '../../helpers/eventually';
import { RedisServer } from '../../helpers/redis-server';
import { TlsRedis, tlsEnv } from '../../helpers/redis-tls';
import { SentinelSet } from '../../helpers/sentinel-set';
import { redisSettings } from '../../helpers/stores';

const cleanup = collectCleanups();
const run = `${process.pid}_${Date.now()}`;
let certs: Certificates;
let server: TlsRedis;

/** Two quick retries, then give up: refusals are checked after the retries, not instead. */
const QUICK_START = {
  REDIS_STARTUP_INITIAL_INTERVAL: '20ms',
  REDIS_STARTUP_MAX_INTERVAL: '40ms',
  REDIS_STARTUP_MAX_ELAPSED_TIME: '100ms',
};

beforeAll(async () => {
  certs = makeCertificates('127.0.0.1');
  cleanup(() => {
    certs.destroy();
  });
  server = await TlsRedis.start(certs);
  cleanup(() => server.destroy());
});

function open(env: Record<string, string>): Promise<RedisCounterStore> {
  return RedisCounterStore.open(redisSettings({ ...QUICK_START, ...env }), silentLogger);
}

async function works(env: Record<string, string>): Promise<void> {
  const store = await open(env);
  try {
    const key = `tls_${run}_${Math.random()}`;
    expect(
      await store.increment([
        { key, hits: 2, ttlSeconds: 60, isPerSecond: false, isNegative: false },
      ]),
    ).toEqual([2]);
  } finally {
    await store.close();
  }
}

async function refusal(env: Record<string, string>): Promise<string> {
  try {
    const store = await open(env);
    await store.close();
  } catch (err: unknown) {
    if (err instanceof StoreError) return err.message;
    throw err;
  }
  throw new Error('expected the connection to be refused');
}

const at = (host = '127.0.0.1'): Record<string, string> => ({
  REDIS_URL: `${host}:${server.port}`,
});

describe('accepted', () => {
  it('with the CA and a client certificate', async () => {
    await works({ ...at(), ...tlsEnv('REDIS_', certs) });
  });

  it('with the CA alone (the server does not require a client certificate)', async () => {
    await works({ ...at(), REDIS_TLS: 'true', REDIS_TLS_CACERT: certs.caCert });
  });

  it('with a rediss:// URL', async () => {
    await works({
      REDIS_URL: `rediss://127.0.0.1:${server.port}`,
      REDIS_TLS_CACERT: certs.caCert,
    });
  });

  it('at a name the certificate lacks, with REDIS_TLS_SKIP_HOSTNAME_VERIFICATION', async () => {
    await works({
      ...at('127.0.0.2'),
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
    });
  });
});

describe('refused, naming the setting', () => {
  it('an untrusted CA', async () => {
    const message = await refusal({
      ...at(),
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_CACERT: certs.otherCaCert,
    });
    expect(message).toMatch(/self-signed certificate in certificate chain/);
    expect(message).toContain(
      "the server's certificate is not signed by a trusted CA: set REDIS_TLS_CACERT to the CA that signed it",
    );
  });

  it('a client certificate from another CA', async () => {
    const message = await refusal({
      ...at(),
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_CLIENT_CERT: certs.otherClientCert,
      REDIS_TLS_CLIENT_KEY: certs.otherClientKey,
    });
    expect(message).toMatch(/check REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY/);
  });

  it('a host name the certificate does not hold', async () => {
    const message = await refusal({ ...at('127.0.0.2'), ...tlsEnv('REDIS_', certs) });
    expect(message).toMatch(/Hostname\/IP does not match certificate's altnames/);
    expect(message).toContain('set REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true');
  });

  it('a CA file that cannot be read, at once and without retrying', async () => {
    const started = Date.now();
    const message = await refusal({
      ...at(),
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_CACERT: '/nonexistent/ca.pem',
      REDIS_STARTUP_MAX_ELAPSED_TIME: '0',
    });
    expect(message).toMatch(
      /^redis backend: REDIS_TLS_CACERT: cannot read "\/nonexistent\/ca.pem": ENOENT/,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a key that does not belong to the client certificate', async () => {
    const message = await refusal({
      ...at(),
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_CLIENT_KEY: certs.otherClientKey,
    });
    expect(message).toMatch(/^redis backend: REDIS_TLS_CLIENT_KEY: .* is not usable/);
  });

  it('the per-second instance by its own settings', async () => {
    const plain = await RedisServer.start();
    try {
      const message = await refusal({
        REDIS_URL: `127.0.0.1:${plain.port}`,
        REDIS_PERSECOND: 'true',
        REDIS_PERSECOND_URL: `127.0.0.1:${server.port}`,
        ...tlsEnv('REDIS_PERSECOND_', certs),
        REDIS_PERSECOND_TLS_CACERT: certs.otherCaCert,
      });
      expect(message).toContain('set REDIS_PERSECOND_TLS_CACERT to the CA that signed it');
    } finally {
      await plain.destroy();
    }
  });
});

describe('never plain text instead', () => {
  it('a plain client at a TLS-only server is refused, with the hint to turn TLS on', async () => {
    expect(await refusal(at())).toMatch(/if the server only accepts TLS, set REDIS_TLS=true/);
  });

  it('a TLS client at a plain server is refused rather than talking plain text', async () => {
    const plain = await RedisServer.start();
    const check = plain.client();
    // Commands run so far, but for the INFO that asks.
    const ran = async (): Promise<string> =>
      (await check.info('commandstats'))
        .split('\n')
        .filter((line) => line.startsWith('cmdstat_') && !line.startsWith('cmdstat_info:'))
        .map((line) => line.replace(/,usec=.*$/, ''))
        .join('\n');
    try {
      const before = await ran();
      const message = await refusal({
        REDIS_URL: `127.0.0.1:${plain.port}`,
        ...tlsEnv('REDIS_', certs),
        REDIS_TIMEOUT: '500ms',
      });
      expect(message).toMatch(
        /^redis backend: cannot connect to tcp\+tls 127\.0\.0\.1:\d+: connect ETIMEDOUT \(no TLS session within REDIS_TIMEOUT: check that the server speaks TLS at REDIS_URL\)$/,
      );
      // The handshake bytes were refused as unknown commands; no real command ran in plain text.
      expect(await ran()).toBe(before);
    } finally {
      check.disconnect();
      await plain.destroy();
    }
  });
});

it('connects to sentinels and master over TLS', async () => {
  const set = await SentinelSet.start({ replicas: 0, sentinels: 1, tls: certs });
  try {
    await works({ REDIS_TYPE: 'sentinel', REDIS_URL: set.url, ...tlsEnv('REDIS_', certs) });
  } finally {
    await set.destroy();
  }
});

describe('closing', () => {
  /** Connections the server holds, the asking one included. */
  async function connections(): Promise<number> {
    const list = (await server.node.command('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((line) => line.trim() !== '').length;
  }

  it('logs no outage when the store closes its own connection', async () => {
    const logger = new MemoryLogger();
    const store = await RedisCounterStore.open(
      redisSettings({ ...QUICK_START, ...at(), ...tlsEnv('REDIS_', certs) }),
      logger,
    );
    const key = `tls_close_${run}`;
    const hit = { key, hits: 1, ttlSeconds: 60, isPerSecond: false, isNegative: false };
    expect(await store.increment([hit])).toEqual([1]);
    await store.close();
    // The client hears of the end of a TLS connection after QUIT has been answered: once the
    // server has let the connection go, a few turns of the event loop deliver that to it.
    await eventually(async () => (await connections()) === 1, { what: 'the connection closed' });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});
