// MEMCACHE_TLS against memcached serving TLS only (-Z), with certificates made by openssl.
import { silentLogger } from '../../../src/lib/logger';
import { MemcachedCounterStore, StoreError } from '../../../src/store';
import { makeCertificates, type Certificates } from '../../helpers/certs';
import { MemcachedServer } from '../../helpers/memcached-server';
import { memcacheSettings } from '../../helpers/memcached-settings';
import { inc } from '../../helpers/store-calls';

let certs: Certificates;
let server: MemcachedServer;
const run = `${process.pid}_${Date.now()}`;

beforeAll(async () => {
  // The certificate names "memcached.test"; the store dials 127.0.0.1.
  certs = makeCertificates('memcached.test');
  server = await MemcachedServer.start({
    tls: { certFile: certs.serverCert, keyFile: certs.serverKey, caFile: certs.caCert },
  });
});

afterAll(async () => {
  await server.stop();
  certs.destroy();
});

function open(env: Record<string, string>): Promise<MemcachedCounterStore> {
  return MemcachedCounterStore.open(
    memcacheSettings({
      MEMCACHE_HOST_PORT: server.address,
      MEMCACHE_TLS: 'true',
      MEMCACHE_TIMEOUT: '5s',
      ...env,
    }),
    { logger: silentLogger },
  );
}

async function failure(env: Record<string, string>): Promise<StoreError> {
  const store = await open(env);
  try {
    await store.increment([inc(`refused_${run}`)]);
  } catch (err: unknown) {
    if (err instanceof StoreError) return err;
    throw err;
  } finally {
    await store.close();
  }
  throw new Error('expected a StoreError');
}

it('counts over TLS with the CA, a client certificate and hostname verification skipped', async () => {
  const store = await open({
    MEMCACHE_TLS_CACERT: certs.caCert,
    MEMCACHE_TLS_CLIENT_CERT: certs.clientCert,
    MEMCACHE_TLS_CLIENT_KEY: certs.clientKey,
    MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
  });
  try {
    const key = `tls_${run}`;
    expect(await store.increment([inc(key)])).toEqual([1]);
    expect(await store.increment([inc(key)])).toEqual([2]);
    expect((await server.item(key))?.value).toBe('2');
  } finally {
    await store.close();
  }
});

it('verifies the host name unless told not to', async () => {
  const err = await failure({ MEMCACHE_TLS_CACERT: certs.caCert });
  expect(err.isTransient).toBe(true);
  expect(err.message).toContain(
    "Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list",
  );
});

it('refuses a server whose certificate the CA did not sign, even when skipping the name', async () => {
  const err = await failure({
    MEMCACHE_TLS_CACERT: certs.otherCaCert,
    MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
  });
  expect(err.message).toContain('self-signed certificate in certificate chain');
});

it('gets no answer in plain TCP from a TLS-only server', async () => {
  const err = await failure({ MEMCACHE_TLS: 'false' });
  expect(err.isTransient).toBe(true);
});

it('presents the client certificate to a server that requires one', async () => {
  const strict = await MemcachedServer.start({
    tls: {
      certFile: certs.serverCert,
      keyFile: certs.serverKey,
      caFile: certs.caCert,
      requireClientCert: { certFile: certs.clientCert, keyFile: certs.clientKey },
    },
  });
  const env = (extra: Record<string, string>): Record<string, string> => ({
    MEMCACHE_HOST_PORT: strict.address,
    MEMCACHE_TLS: 'true',
    MEMCACHE_TLS_CACERT: certs.caCert,
    MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
    MEMCACHE_TIMEOUT: '5s',
    ...extra,
  });
  try {
    const withCert = await MemcachedCounterStore.open(
      memcacheSettings(
        env({
          MEMCACHE_TLS_CLIENT_CERT: certs.clientCert,
          MEMCACHE_TLS_CLIENT_KEY: certs.clientKey,
        }),
      ),
      { logger: silentLogger },
    );
    try {
      expect(await withCert.increment([inc(`mutual_${run}`)])).toEqual([1]);
    } finally {
      await withCert.close();
    }
    const without = await MemcachedCounterStore.open(memcacheSettings(env({})), {
      logger: silentLogger,
    });
    try {
      await expect(without.increment([inc(`mutual_${run}`)])).rejects.toBeInstanceOf(StoreError);
    } finally {
      await without.close();
    }
  } finally {
    await strict.stop();
  }
});

it('names the setting whose file cannot be read', async () => {
  await expect(open({ MEMCACHE_TLS_CACERT: '/nonexistent/ca.pem' })).rejects.toThrow(
    'MEMCACHE_TLS_CACERT: cannot read /nonexistent/ca.pem',
  );
});
