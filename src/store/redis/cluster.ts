// Cluster mode: slot owners found from seed nodes, redirections followed, topology refreshed.
import type { ConnectionOptions } from 'node:tls';
import { Cluster, type ClusterOptions } from 'ioredis';
import type { RedisInstanceSettings } from '../../settings';
import { parseHostPort } from './addresses';
import type { NodeOptions } from './credentials';

/** How often the slot table is fetched even when no error says it changed. */
const SLOTS_REFRESH_INTERVAL_MS = 5_000;

/**
 * A cluster client from the seed nodes of REDIS_URL. Every node connection is made from
 * `node` (timeouts, credentials, TLS); node connections are not retried on their own: a lost
 * node is dropped and the slot table, fetched again on MOVED, on errors and every 5 s, says
 * where its slots went. With TLS the seed host names are kept unresolved, so certificates are
 * checked against the names operators configured (ElastiCache's configuration endpoint).
 */
export function createCluster(
  instance: RedisInstanceSettings,
  node: NodeOptions,
  tls: ConnectionOptions | undefined,
): Cluster {
  const options = {
    redisOptions: node,
    lazyConnect: true,
    // Requests fail at once while the cluster is unreachable instead of queueing.
    enableOfflineQueue: false,
    enableReadyCheck: true,
    scaleReads: 'master',
    clusterRetryStrategy: () => null,
    slotsRefreshTimeout: Math.min(instance.timeoutMs, 2_000),
    slotsRefreshInterval: SLOTS_REFRESH_INTERVAL_MS,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    ...(tls === undefined
      ? {}
      : {
          dnsLookup: (address: string, callback: (err: Error | null, address: string) => void) => {
            callback(null, address);
          },
        }),
  } satisfies ClusterOptions;
  return new Cluster(
    instance.url.split(',').map((item) => parseHostPort(item.trim())),
    options,
  );
}
