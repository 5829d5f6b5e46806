// Replicas share their Envoys' demand through Redis (single, sentinel or cluster, as
// REDIS_TYPE says): one hash per bucket, one field per replica, each field dated by Redis's clock.
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import { describeError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { RedisInstanceSettings } from '../settings';
import {
  connectWithBackoff,
  createInstanceClient,
  describeInstance,
  setReconnecting,
} from '../store';
import type { RemoteClaim } from './bucket';
import { newReplicaId, type QuotaDemandShare } from './demand-share';

/**
 * KEYS: the buckets' hashes; ARGV: replica id, TTL in ms, then each key's claims ('' withdraws
 * them). For each key, writes this replica's field stamped with its expiry on Redis's clock
 * (replicas' clocks may differ; Redis's is one), drops expired fields, and returns the other
 * live fields: one list per key, in order.
 */
export const EXCHANGE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local replica = ARGV[1]
local ttl = tonumber(ARGV[2])
local out = {}
for k = 1, #KEYS do
  local key = KEYS[k]
  local claims = ARGV[k + 2]
  if claims == '' then
    redis.call('HDEL', key, replica)
  else
    redis.call('HSET', key, replica, (now + ttl) .. '|' .. claims)
    redis.call('PEXPIRE', key, ttl * 2)
  end
  local all = redis.call('HGETALL', key)
  local others = {}
  for i = 1, #all, 2 do
    local value = all[i + 1]
    local bar = string.find(value, '|', 1, true)
    local expires = bar and tonumber(string.sub(value, 1, bar - 1)) or 0
    if expires < now then
      redis.call('HDEL', key, all[i])
    elseif all[i] ~= replica then
      table.insert(others, string.sub(value, bar + 1))
    end
  end
  out[k] = others
end
return out
`;

/**
 * Buckets one script call exchanges on a single server (a cluster's keys must share a slot:
 * one each there): a tick's thousand buckets in a few calls, each holding Redis for about a
 * millisecond.
 */
const KEYS_PER_CALL = 200;

type ExchangeClient = (Redis | Cluster) & {
  /** The number of keys, the keys, then replica id, TTL and each key's claims. */
  rlqsExchange(keyCount: number, ...args: (string | number)[]): Promise<unknown>;
};

export interface RedisDemandOptions {
  readonly instance: RedisInstanceSettings;
  /** REDIS_STARTUP_*: how the first connection is retried. */
  readonly startup: {
    readonly initialIntervalMs: number;
    readonly maxIntervalMs: number;
    readonly maxElapsedMs: number;
  };
  readonly logger: Logger;
  /** Prepended to every key (CACHE_KEY_PREFIX). */
  readonly keyPrefix: string;
  /** How long a replica's published demand lives without being published again. */
  readonly ttlMs: number;
  readonly replicaId?: string;
}

/** `password` or `user:password`, re-read before each connection attempt (REDIS_AUTH_FILE). */
function fileCredentials(path: string): {
  next(): Promise<{ username: string | undefined; password: string | undefined }>;
  refreshIntervalMs: undefined;
} {
  return {
    next: () => {
      try {
        const text = readFileSync(path, 'utf8').trim();
        const colon = text.indexOf(':');
        return Promise.resolve(
          colon < 0
            ? { username: undefined, password: text }
            : { username: text.slice(0, colon), password: text.slice(colon + 1) },
        );
      } catch (err: unknown) {
        return Promise.reject(err instanceof Error ? err : new Error(describeError(err)));
      }
    },
    refreshIntervalMs: undefined,
  };
}

/** Reads one replica's published claims; what does not parse is left out. */
function parseClaims(text: string): RemoteClaim[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const claims: RemoteClaim[] = [];
  for (const item of parsed as unknown[]) {
    if (!Array.isArray(item) || typeof item[0] !== 'string') continue;
    const demand: unknown = item[1];
    claims.push({
      id: item[0],
      demandPerSecond: typeof demand === 'number' && Number.isFinite(demand) ? demand : undefined,
    });
  }
  return claims;
}

export class RedisDemandShare implements QuotaDemandShare {
  private published = new Set<string>();
  private isClosed = false;

  private constructor(
    readonly replicaId: string,
    private readonly client: ExchangeClient,
    private readonly isCluster: boolean,
    private readonly options: RedisDemandOptions,
  ) {}

  /**
   * Connects as the backend's settings say (retrying as REDIS_STARTUP_* says); rejects naming
   * the instance when it gives up, or when the instance authenticates with IAM tokens, which
   * demand sharing does not sign.
   */
  static async open(options: RedisDemandOptions): Promise<RedisDemandShare> {
    const { instance, logger } = options;
    if (instance.iam !== undefined)
      throw new Error(
        'RLQS demand sharing cannot authenticate with REDIS_AWS_IAM_AUTH; use REDIS_AUTH or REDIS_AUTH_FILE',
      );
    const handle = createInstanceClient(instance);
    const client = handle.client as unknown as ExchangeClient;
    client.defineCommand('rlqsExchange', { lua: EXCHANGE_LUA });
    client.on('error', (err: Error) => {
      logger.debug('rlqs redis client error', { error: err.message });
    });
    const source = instance.auth.kind === 'file' ? fileCredentials(instance.auth.path) : undefined;
    try {
      await connectWithBackoff(handle, instance, source, options.startup, logger);
    } catch (err: unknown) {
      client.disconnect();
      throw err;
    }
    logger.info('rlqs demand sharing connected', { target: describeInstance(instance) });
    const replicaId = options.replicaId ?? newReplicaId();
    return new RedisDemandShare(replicaId, client, handle.isCluster, options);
  }

  private key(bucket: string): string {
    return `${this.options.keyPrefix}rlqs_${bucket}`;
  }

  async exchange(
    local: ReadonlyMap<string, readonly RemoteClaim[]>,
  ): Promise<ReadonlyMap<string, readonly RemoteClaim[]>> {
    const entries = [...local];
    const answers = await this.call(
      entries.map(([bucket, claims]) => [
        this.key(bucket),
        claims.length === 0
          ? ''
          : JSON.stringify(claims.map((c) => [c.id, c.demandPerSecond ?? null])),
      ]),
    );
    const others = new Map<string, RemoteClaim[]>();
    entries.forEach(([bucket, claims], i) => {
      if (claims.length > 0) this.published.add(bucket);
      else this.published.delete(bucket);
      const fields = answers[i];
      const remote = Array.isArray(fields)
        ? fields.flatMap((f: unknown) => (typeof f === 'string' ? parseClaims(f) : []))
        : [];
      if (remote.length > 0) others.set(bucket, remote);
    });
    return others;
  }

  /**
   * Every bucket's exchange, each answer in order: on one server up to KEYS_PER_CALL buckets a
   * script call, one call after the other; on a cluster one call per bucket. A command per
   * bucket, a thousand each tick, cost the replica more than its Envoys' reports, and while
   * they ran the young collections promoted ShouldRateLimit calls' objects: the old generation
   * grew by some 40 MB a second (docs/performance.md).
   */
  private async call(
    calls: readonly (readonly [key: string, claims: string])[],
  ): Promise<unknown[]> {
    const run = async (batch: readonly (readonly [string, string])[]): Promise<unknown[]> => {
      const answer = await this.client.rlqsExchange(
        batch.length,
        ...batch.map(([key]) => key),
        this.replicaId,
        this.options.ttlMs,
        ...batch.map(([, claims]) => claims),
      );
      if (!Array.isArray(answer) || answer.length !== batch.length)
        throw new Error('the exchange script answered something else than a list per key');
      return answer as unknown[];
    };
    if (this.isCluster) return (await Promise.all(calls.map((c) => run([c])))).flat(1);
    const out: unknown[] = [];
    for (let at = 0; at < calls.length; at += KEYS_PER_CALL)
      out.push(...(await run(calls.slice(at, at + KEYS_PER_CALL))));
    return out;
  }

  /** Withdraws this replica's demand (so the others rebalance at once), then disconnects. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    const withdrawn = new Map<string, readonly RemoteClaim[]>(
      [...this.published].map((bucket) => [bucket, []]),
    );
    try {
      await this.exchange(withdrawn);
    } catch (err: unknown) {
      this.options.logger.debug('cannot withdraw rlqs demand; it expires on its own', {
        error: describeError(err),
      });
    }
    setReconnecting(this.client, false);
    try {
      await this.client.quit();
    } catch {
      // Closed already or unreachable: disconnect() ends it either way.
    }
    this.client.disconnect();
  }
}
