// Redis section: the main instance (REDIS_*), the per-second one (REDIS_PERSECOND_*) and start-up.
import { deepFreeze } from '../lib/freeze';
import { describeValue } from './environment';
import type { SettingsProblem } from './errors';
import { maskCredentialsInUrl } from '../lib/mask';
import { bool, duration, int, oneOf, secret, str } from './fields';
import { redisIam, redisModeProblems, redisTls, withInheritedTlsFiles } from './redis-modes';
import { clientTlsFields, group, type Values } from './section';
import type { RedisAuthSettings, RedisBackendSettings, RedisInstanceSettings } from './types';

/** The options of one Redis instance; the per-second instance has the same set. */
function redisInstanceFields(defaultUrl: string) {
  return {
    SOCKET_TYPE: oneOf('', ['', 'tcp', 'unix'], { tcp4: 'tcp', tcp6: 'tcp' }),
    TYPE: oneOf('single', ['single', 'sentinel', 'cluster']),
    // A URL may carry user:password@.
    URL: secret(str(defaultUrl)),
    POOL_SIZE: int(10, 1),
    AUTH: secret(str()),
    AUTH_FILE: str(),
    SENTINEL_AUTH: secret(str()),
    ...clientTlsFields(),
    PIPELINE_WINDOW: duration('0'),
    PIPELINE_LIMIT: int(0),
    CLUSTER_PIPELINE_PARALLELISM: int(1),
    TIMEOUT: duration('10s'),
    POOL_ON_EMPTY_BEHAVIOR: oneOf('CREATE', ['CREATE', 'ERROR', 'WAIT']),
    POOL_ON_EMPTY_WAIT_DURATION: duration('1s'),
    CLOSE_CONNECTION_ON_READONLY_ERROR: bool(false),
    AWS_IAM_AUTH: bool(false),
    AWS_IAM_CACHE_NAME: str(),
    AWS_IAM_USER_ID: str(),
    AWS_IAM_SERVERLESS: bool(false),
    AWS_IAM_REGION: str(),
  };
}

export const REDIS_COMMON = group('REDIS_', {
  PERSECOND: bool(false),
  HEALTH_CHECK_ACTIVE_CONNECTION: bool(false),
  STARTUP_INITIAL_INTERVAL: duration('1s'),
  STARTUP_MAX_INTERVAL: duration('30s'),
  STARTUP_MAX_ELAPSED_TIME: duration('0'),
});
export const REDIS = group('REDIS_', redisInstanceFields('localhost:6379'));
export const REDIS_PER_SECOND = group('REDIS_PERSECOND_', redisInstanceFields(''));

type InstanceValues = Values<typeof REDIS>;

function parseAuth(text: string): RedisAuthSettings {
  if (text === '') return { kind: 'none' };
  const colon = text.indexOf(':');
  if (colon < 0) return { kind: 'static', username: undefined, password: text };
  return { kind: 'static', username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** The problem with an instance's URL for its socket type and mode, if any. */
function urlProblem(
  raw: InstanceValues,
  prefix: string,
  url: string,
  socketType: 'tcp' | 'unix',
): SettingsProblem | undefined {
  if (url === '') {
    // The per-second URL has its own clearer message (redisBackendSettings).
    if (prefix === 'REDIS_PERSECOND_') return undefined;
    return {
      setting: `${prefix}URL`,
      message: 'is empty; accepted: host:port or a unix socket path',
    };
  }
  if (
    socketType === 'tcp' &&
    raw.TYPE === 'single' &&
    !/^(rediss?:\/\/.+|[^,\s]+:\d+)$/.test(url)
  ) {
    return {
      setting: `${prefix}URL`,
      message: `${describeValue(maskCredentialsInUrl(url))} is not valid for ${prefix}SOCKET_TYPE tcp; accepted: host:port or redis://[user:password@]host:port`,
    };
  }
  if (raw.TYPE === 'sentinel' && url.split(',').length < 2) {
    return {
      setting: `${prefix}URL`,
      message: `${describeValue(maskCredentialsInUrl(url))} is not valid for ${prefix}TYPE sentinel; accepted: master-name,host:port[,host:port...]`,
    };
  }
  return undefined;
}

/** One instance's settings, read under `prefix` (REDIS_ or REDIS_PERSECOND_). */
export function redisInstanceSettings(
  raw: InstanceValues,
  prefix: string,
  problems: SettingsProblem[],
): RedisInstanceSettings {
  if (raw.AUTH !== '' && raw.AUTH_FILE !== '') {
    problems.push({
      setting: `${prefix}AUTH`,
      message: `${prefix}AUTH and ${prefix}AUTH_FILE are both set; they exclude each other: set only one`,
    });
  }
  const url = raw.URL.trim();
  const socketType =
    raw.SOCKET_TYPE === '' ? (url.startsWith('/') ? 'unix' : 'tcp') : raw.SOCKET_TYPE;
  const problem = urlProblem(raw, prefix, url, socketType);
  if (problem !== undefined) problems.push(problem);
  problems.push(...redisModeProblems(raw, prefix, url, socketType));
  return {
    settingPrefix: prefix,
    socketType,
    type: raw.TYPE,
    url,
    poolSize: raw.POOL_SIZE,
    auth: raw.AUTH_FILE !== '' ? { kind: 'file', path: raw.AUTH_FILE } : parseAuth(raw.AUTH),
    sentinelAuth: parseAuth(raw.SENTINEL_AUTH),
    tls: redisTls(raw, url),
    pipelineWindowMs: raw.PIPELINE_WINDOW,
    clusterPipelineParallelism: raw.CLUSTER_PIPELINE_PARALLELISM,
    timeoutMs: raw.TIMEOUT,
    poolOnEmptyBehavior: raw.POOL_ON_EMPTY_BEHAVIOR,
    poolOnEmptyWaitMs: raw.POOL_ON_EMPTY_WAIT_DURATION,
    closeConnectionOnReadonlyError: raw.CLOSE_CONNECTION_ON_READONLY_ERROR,
    iam: redisIam(raw),
  };
}

/** The Redis backend; called only when BACKEND_TYPE chooses it. */
export function redisBackendSettings(
  common: Values<typeof REDIS_COMMON>,
  main: InstanceValues,
  perSecond: InstanceValues,
  problems: SettingsProblem[],
): RedisBackendSettings {
  if (common.PERSECOND && perSecond.URL === '') {
    problems.push({
      setting: 'REDIS_PERSECOND_URL',
      message: 'REDIS_PERSECOND is true but REDIS_PERSECOND_URL is not set',
    });
  }
  return deepFreeze({
    type: 'redis',
    main: redisInstanceSettings(main, 'REDIS_', problems),
    perSecond: common.PERSECOND
      ? redisInstanceSettings(withInheritedTlsFiles(perSecond, main), 'REDIS_PERSECOND_', problems)
      : undefined,
    healthCheckActiveConnection: common.HEALTH_CHECK_ACTIVE_CONNECTION,
    startup: {
      initialIntervalMs: common.STARTUP_INITIAL_INTERVAL,
      maxIntervalMs: common.STARTUP_MAX_INTERVAL,
      maxElapsedMs: common.STARTUP_MAX_ELAPSED_TIME,
    },
  });
}
