// Sentinel mode: the master a group of sentinels names, followed through failovers.
import type { ConnectionOptions } from 'node:tls';
import type { RedisInstanceSettings } from '../../settings';
import { parseHostPort } from './addresses';
import { fixedCredentials, type NodeOptions } from './credentials';

/**
 * ioredis options for `master-name,host:port,host:port...`. The client asks the sentinels for
 * the master, checks the node it reaches is one (a demoted master is left at once), and
 * subscribes to +switch-master on the sentinels so a failover moves it to the new master
 * without waiting for the old one to drop it. REDIS_SENTINEL_AUTH authenticates to the
 * sentinels, REDIS_AUTH (or the file, or an IAM token) to the master; TLS, when on, applies
 * to both, as in the reference.
 */
export function sentinelOptions(
  instance: RedisInstanceSettings,
  node: NodeOptions,
  tls: ConnectionOptions | undefined,
): NodeOptions {
  const [name = '', ...sentinels] = instance.url.split(',').map((item) => item.trim());
  const sentinelAuth = fixedCredentials(instance.sentinelAuth);
  return {
    ...node,
    name,
    sentinels: sentinels.map(parseHostPort),
    role: 'master',
    ...(sentinelAuth.password === undefined ? {} : { sentinelPassword: sentinelAuth.password }),
    ...(sentinelAuth.username === undefined ? {} : { sentinelUsername: sentinelAuth.username }),
    sentinelCommandTimeout: instance.timeoutMs,
    // Failing over to the next sentinel is ioredis's; retrying the whole round is retryStrategy's.
    sentinelRetryStrategy: () => null,
    failoverDetector: true,
    ...(tls === undefined ? {} : { enableTLSForSentinelMode: true, sentinelTLS: tls }),
  };
}
