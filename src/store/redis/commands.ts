// The few Redis commands the counters need, as values the batchers can route, pipeline or resend.
import { createHash } from 'node:crypto';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { TOKEN_BUCKET_LUA } from '../token-bucket';

/** The token bucket script's SHA1, as EVALSHA names it. */
export const TOKEN_BUCKET_SHA = createHash('sha1').update(TOKEN_BUCKET_LUA).digest('hex');

/** Subtracts, floors at 0 and refreshes the expiry in one step; a missing key stays missing. */
export const DECREMENT_FLOORED = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local value = tonumber(current) - tonumber(ARGV[1])
if value < 0 then value = 0 end
redis.call('SET', KEYS[1], value, 'EX', ARGV[2])
return value
`;

/** A single-node client or a cluster client, with the floored decrement defined on it. */
export type CounterClient = (Redis | Cluster) & {
  decrementFloored(key: string, hits: number, ttlSeconds: number): Promise<number>;
};

type PipelineWithScript = ChainableCommander & {
  decrementFloored(key: string, hits: number, ttlSeconds: number): ChainableCommander;
};

/** One command on one key. */
export type CounterCommand =
  | { readonly name: 'incrby'; readonly key: string; readonly hits: number }
  | { readonly name: 'expire'; readonly key: string; readonly ttlSeconds: number }
  | {
      readonly name: 'decrementFloored';
      readonly key: string;
      readonly hits: number;
      readonly ttlSeconds: number;
    }
  | { readonly name: 'get'; readonly key: string }
  /** The token bucket script by its SHA1 (EVALSHA), with its arguments after the key. */
  | { readonly name: 'tokenBucket'; readonly key: string; readonly args: readonly string[] }
  /** The same by its text (EVAL), which also stores it on that server: after NOSCRIPT. */
  | { readonly name: 'tokenBucketEval'; readonly key: string; readonly args: readonly string[] };

/** Defines the floored decrement script on a new client. */
export function defineCounterScripts(client: Redis | Cluster): CounterClient {
  client.defineCommand('decrementFloored', { numberOfKeys: 1, lua: DECREMENT_FLOORED });
  return client as CounterClient;
}

/** Adds the command to a pipeline. */
export function appendCommand(pipeline: ChainableCommander, command: CounterCommand): void {
  switch (command.name) {
    case 'incrby':
      pipeline.incrby(command.key, command.hits);
      return;
    case 'expire':
      pipeline.expire(command.key, command.ttlSeconds);
      return;
    case 'decrementFloored':
      (pipeline as PipelineWithScript).decrementFloored(
        command.key,
        command.hits,
        command.ttlSeconds,
      );
      return;
    case 'get':
      pipeline.get(command.key);
      return;
    case 'tokenBucket':
      pipeline.evalsha(TOKEN_BUCKET_SHA, 1, command.key, ...command.args);
      return;
    case 'tokenBucketEval':
      pipeline.eval(TOKEN_BUCKET_LUA, 1, command.key, ...command.args);
      return;
  }
}

/** Sends the command on its own, so the client's own redirection handling applies to it. */
export function sendCommand(client: CounterClient, command: CounterCommand): Promise<unknown> {
  switch (command.name) {
    case 'incrby':
      return client.incrby(command.key, command.hits);
    case 'expire':
      return client.expire(command.key, command.ttlSeconds);
    case 'decrementFloored':
      return client.decrementFloored(command.key, command.hits, command.ttlSeconds);
    case 'get':
      return client.get(command.key);
    case 'tokenBucket':
      return client.evalsha(TOKEN_BUCKET_SHA, 1, command.key, ...command.args);
    case 'tokenBucketEval':
      return client.eval(TOKEN_BUCKET_LUA, 1, command.key, ...command.args);
  }
}
