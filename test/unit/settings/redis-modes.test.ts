// Redis sentinel, cluster, TLS and AWS IAM settings: what they become, and what is refused.
import { loadSettings, type RedisBackendSettings } from '../../../src/settings';
import { settingsProblems } from '../../helpers/settings';

const problems = settingsProblems;

function redis(env: Record<string, string>): RedisBackendSettings {
  const backend = loadSettings(env).backend;
  if (backend.type !== 'redis') throw new Error('expected redis settings');
  return backend;
}

const IAM = {
  REDIS_TLS: 'true',
  REDIS_AWS_IAM_AUTH: 'true',
  REDIS_AWS_IAM_CACHE_NAME: 'my-group',
  REDIS_AWS_IAM_USER_ID: 'limiter',
};

describe('modes', () => {
  it('accepts a sentinel list and a cluster seed list', () => {
    expect(
      redis({ REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster,10.0.0.1:26379,[::1]:26380' }).main,
    ).toMatchObject({ type: 'sentinel', url: 'mymaster,10.0.0.1:26379,[::1]:26380' });
    expect(redis({ REDIS_TYPE: 'cluster', REDIS_URL: 'a:7000, b:7001' }).main).toMatchObject({
      type: 'cluster',
    });
  });

  it('configures the per-second instance independently', () => {
    const s = redis({
      REDIS_URL: 'main:6379',
      REDIS_PERSECOND: 'true',
      REDIS_PERSECOND_TYPE: 'cluster',
      REDIS_PERSECOND_URL: 'c1:7000,c2:7000',
      REDIS_PERSECOND_TLS: 'true',
      REDIS_PERSECOND_TLS_CACERT: '/ca.pem',
      REDIS_PERSECOND_PIPELINE_WINDOW: '150us',
      REDIS_PERSECOND_TIMEOUT: '2s',
      REDIS_PERSECOND_AWS_IAM_AUTH: 'true',
      REDIS_PERSECOND_AWS_IAM_CACHE_NAME: 'second',
      REDIS_PERSECOND_AWS_IAM_USER_ID: 'ps-user',
      REDIS_PERSECOND_AWS_IAM_SERVERLESS: 'true',
      REDIS_PERSECOND_AWS_IAM_REGION: 'eu-west-1',
    });
    expect(s.main).toMatchObject({ type: 'single', tls: undefined, iam: undefined });
    expect(s.perSecond).toMatchObject({
      type: 'cluster',
      url: 'c1:7000,c2:7000',
      tls: { caFile: '/ca.pem', certFile: undefined, skipHostnameVerification: false },
      pipelineWindowMs: 0.15,
      timeoutMs: 2000,
      iam: { cacheName: 'second', userId: 'ps-user', serverless: true, region: 'eu-west-1' },
    });
  });

  it('turns TLS on for a rediss:// URL', () => {
    expect(redis({ REDIS_URL: 'rediss://cache.example:6380' }).main.tls).toEqual({
      certFile: undefined,
      keyFile: undefined,
      caFile: undefined,
      serverName: undefined,
      skipHostnameVerification: false,
    });
  });

  it.each([
    [
      { REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster' },
      'REDIS_URL: "mymaster" is not valid for REDIS_TYPE sentinel; accepted: master-name,host:port[,host:port...]',
    ],
    [
      { REDIS_TYPE: 'sentinel', REDIS_URL: 'h:1,h:2' },
      'REDIS_URL: starts with "h:1", not a master name; accepted for REDIS_TYPE sentinel: master-name,host:port[,host:port...] (the sentinels)',
    ],
    [
      { REDIS_TYPE: 'sentinel', REDIS_URL: 'm,h:1,nohost' },
      'REDIS_URL: "nohost" is not host:port; accepted for REDIS_TYPE sentinel: master-name,host:port[,host:port...] (the sentinels)',
    ],
    [
      { REDIS_TYPE: 'cluster', REDIS_URL: 'a:1,b,c:99999' },
      'REDIS_URL: "b", "c:99999" are not host:port; accepted for REDIS_TYPE cluster: host:port[,host:port...] (seed nodes of the cluster)',
    ],
    [
      { REDIS_TYPE: 'cluster', REDIS_SOCKET_TYPE: 'unix', REDIS_URL: '/tmp/r.sock' },
      'REDIS_SOCKET_TYPE: is unix but REDIS_TYPE is cluster, whose nodes are reached over TCP; accepted with cluster: tcp',
    ],
    [
      { REDIS_PERSECOND: 'true', REDIS_PERSECOND_TYPE: 'sentinel', REDIS_PERSECOND_URL: 'm' },
      'REDIS_PERSECOND_URL: "m" is not valid for REDIS_PERSECOND_TYPE sentinel; accepted: master-name,host:port[,host:port...]',
    ],
  ])('refuses a bad address list %j', (env, message) => {
    expect(problems(env)).toEqual([message]);
  });
});

describe('TLS', () => {
  it('wants the client certificate and key together', () => {
    expect(problems({ REDIS_TLS: 'true', REDIS_TLS_CLIENT_CERT: '/c.pem' })).toEqual([
      'REDIS_TLS_CLIENT_KEY: REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY go together; set both or neither',
    ]);
  });
});

describe('per-second TLS files', () => {
  const env = {
    REDIS_TLS: 'true',
    REDIS_TLS_CACERT: '/main-ca.pem',
    REDIS_TLS_CLIENT_CERT: '/main.crt',
    REDIS_TLS_CLIENT_KEY: '/main.key',
    REDIS_PERSECOND: 'true',
    REDIS_PERSECOND_URL: 'ps:6379',
    REDIS_PERSECOND_TLS: 'true',
  };

  it("are the main instance's while none of its own is set, as the reference shares them", () => {
    expect(redis(env).perSecond?.tls).toMatchObject({
      caFile: '/main-ca.pem',
      certFile: '/main.crt',
      keyFile: '/main.key',
    });
  });

  it('are its own as soon as one is set', () => {
    expect(redis({ ...env, REDIS_PERSECOND_TLS_CACERT: '/ps-ca.pem' }).perSecond?.tls).toEqual({
      caFile: '/ps-ca.pem',
      certFile: undefined,
      keyFile: undefined,
      serverName: undefined,
      skipHostnameVerification: false,
    });
  });

  it('stay off while the per-second instance has no TLS', () => {
    expect(redis({ ...env, REDIS_PERSECOND_TLS: 'false' }).perSecond?.tls).toBeUndefined();
  });
});

describe('AWS IAM', () => {
  it('reads the identity of the cache', () => {
    expect(redis(IAM).main.iam).toEqual({
      cacheName: 'my-group',
      userId: 'limiter',
      serverless: false,
      region: undefined,
    });
  });

  it('is refused without TLS, without a cache name or user, and beside a password', () => {
    expect(
      problems({ REDIS_AWS_IAM_AUTH: 'true', REDIS_AWS_IAM_CACHE_NAME: 'g', REDIS_AUTH: 'pw' }),
    ).toEqual([
      'REDIS_AWS_IAM_AUTH: is true but REDIS_TLS is false: an IAM token must never travel in plain text (ElastiCache requires in-transit encryption for IAM); set REDIS_TLS=true',
      'REDIS_AWS_IAM_AUTH: is true and REDIS_AUTH is set; the IAM token is the password: set only one',
      'REDIS_AWS_IAM_USER_ID: is empty but REDIS_AWS_IAM_AUTH is true; accepted: the ElastiCache user ID (IAM users have user ID = user name)',
    ]);
  });

  it('is refused without TLS on the per-second instance alone', () => {
    expect(
      problems({
        ...IAM,
        REDIS_PERSECOND: 'true',
        REDIS_PERSECOND_URL: 'ps:6379',
        REDIS_PERSECOND_AWS_IAM_AUTH: 'true',
        REDIS_PERSECOND_AWS_IAM_CACHE_NAME: 'ps',
        REDIS_PERSECOND_AWS_IAM_USER_ID: 'u',
      }),
    ).toEqual([
      'REDIS_PERSECOND_AWS_IAM_AUTH: is true but REDIS_PERSECOND_TLS is false: an IAM token must never travel in plain text (ElastiCache requires in-transit encryption for IAM); set REDIS_PERSECOND_TLS=true',
    ]);
  });

  it('accepts a rediss:// URL as TLS', () => {
    expect(
      redis({ ...IAM, REDIS_TLS: 'false', REDIS_URL: 'rediss://cache:6379' }).main.iam?.userId,
    ).toBe('limiter');
  });
});

it('ignores the modes while another backend is chosen, as the reference does', () => {
  expect(
    loadSettings({ BACKEND_TYPE: 'memory', REDIS_TYPE: 'cluster', REDIS_URL: 'not a list' })
      .backend,
  ).toEqual({ type: 'memory', maxKeys: 1_000_000 });
});
