// The built service refusing an untrusted Redis server: it retries as REDIS_STARTUP_* says, then
// exits non-zero with an error naming the setting to change.
import { makeCertificates } from '../helpers/certs';
import { collectCleanups } from '../helpers/cleanups';
import { TlsRedis, tlsEnv } from '../helpers/redis-tls';
import { runtimeDirForFile } from '../helpers/runtime-dir';
import { ServiceProcess } from '../helpers/service-process';

const cleanup = collectCleanups();
const runtime = runtimeDirForFile({
  'tls.yaml':
    'domain: tls\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n',
});

it('exits after the start-up retries with an error naming REDIS_TLS_CACERT', async () => {
  const certs = makeCertificates('127.0.0.1');
  cleanup(() => {
    certs.destroy();
  });
  const server = await TlsRedis.start(certs);
  cleanup(() => server.destroy());
  const service = await ServiceProcess.start({
    env: {
      ...runtime.env(),
      REDIS_URL: `127.0.0.1:${server.port}`,
      ...tlsEnv('REDIS_', certs),
      REDIS_TLS_CACERT: certs.otherCaCert,
      REDIS_STARTUP_INITIAL_INTERVAL: '50ms',
      REDIS_STARTUP_MAX_ELAPSED_TIME: '300ms',
    },
    waitFor: 'nothing',
  });
  cleanup(() => service.stop());
  expect(await service.waitForExit()).toBe(1);
  expect(service.logs).toContain('cannot connect to redis yet, retrying');
  expect(service.logs).toMatch(
    /ratelimit: redis backend: cannot connect to tcp\+tls 127\.0\.0\.1:\d+: self-signed certificate in certificate chain \(the server's certificate is not signed by a trusted CA: set REDIS_TLS_CACERT to the CA that signed it\)/,
  );
});
