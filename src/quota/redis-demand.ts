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
 * KEYS[1] the bucket's hash; ARGV: replica id, its claims ('' withdraws them), TTL in ms.
 * Writes this replica's field stamped with its expiry on Redis's clock (replicas' clocks may
 * differ; Redis's is one), drops expired fields, and returns the other live fields.
 */
export const EXCHANGE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], (now + ttl) .. '|' .. ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl * 2)
end
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local value = all[i + 1]
  local bar = string.find(value, '|', 1, true)
  local expires = bar and tonumber(string.sub(value, 1, bar - 1)) or 0
  if expires < now then
    redis.call('HDEL', KEYS[1], all[i])
  elseif all[i] ~= ARGV[1] then
    table.insert(out, string.sub(value, bar + 1))
  end
end
return out
`;

type ExchangeClient = (Redis | Cluster) & {
  rlqsExchange(key: string, replica: string, claims: string, ttlMs: number): Promise<unknown>;
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
    client.defineCommand('rlqsExchange', { numberOfKeys: 1, lua: EXCHANGE_LUA });
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
    return new RedisDemandShare(options.replicaId ?? newReplicaId(), client, options);
  }

  private key(bucket: string): string {
    return `${this.options.keyPrefix}rlqs_${bucket}`;
  }

  async exchange(
    local: ReadonlyMap<string, readonly RemoteClaim[]>,
  ): Promise<ReadonlyMap<string, readonly RemoteClaim[]>> {
    const entries = [...local];
    const answers = await Promise.all(
      entries.map(([bucket, claims]) => {
        const payload =
          claims.length === 0
            ? ''
            : JSON.stringify(claims.map((c) => [c.id, c.demandPerSecond ?? null]));
        return this.client.rlqsExchange(
          this.key(bucket),
          this.replicaId,
          payload,
          this.options.ttlMs,
        );
      }),
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
