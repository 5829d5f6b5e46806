// Builds one instance's client (single, sentinel or cluster) and opens its first connection.
import { performance } from 'node:perf_hooks';
import { backOff } from 'exponential-backoff';
import { Cluster, Redis } from 'ioredis';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { StateLog } from '../../lib/state-log';
import { maskCredentialsInUrl } from '../../lib/mask';
import type { RedisInstanceSettings } from '../../settings';
import { createCluster } from './cluster';
import { defineCounterScripts, type CounterClient } from './commands';
import {
  applyCredentials,
  fixedCredentials,
  type CredentialSource,
  type NodeOptions,
} from './credentials';
import { sentinelOptions } from './sentinel';
import { tlsHint, tlsOptions } from './tls';

/** How the first connection is retried (REDIS_STARTUP_*). */
export interface StartupBackoff {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  /** 0 retries for ever. */
  readonly maxElapsedMs: number;
}

/** Reconnection after the first connection: quick, capped, for ever. */
function runtimeRetryDelayMs(attempt: number): number {
  return Math.min(50 * 2 ** Math.min(attempt, 10), 2000);
}

/** Where to connect: a unix socket path, a redis:// URL, or host:port. */
export function addressOptions(
  instance: RedisInstanceSettings,
): { path: string } | { host: string; port: number } | string {
  if (instance.socketType === 'unix') return { path: instance.url.replace(/^unix:\/\//, '') };
  if (/^rediss?:\/\//i.test(instance.url)) return instance.url;
  const colon = instance.url.lastIndexOf(':');
  const host = instance.url.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(instance.url.slice(colon + 1)) };
}

/** A description of the instance safe for logs. */
export function describeInstance(instance: RedisInstanceSettings): string {
  const mode = instance.type === 'single' ? instance.socketType : instance.type;
  return `${mode}${instance.tls === undefined ? '' : '+tls'} ${maskCredentialsInUrl(instance.url)}`;
}

/** Options of every connection to a Redis node, whatever the mode. */
function nodeOptions(instance: RedisInstanceSettings): NodeOptions {
  return {
    lazyConnect: true,
    // Commands fail at once while disconnected, so callers get an error instead of a stall.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: instance.timeoutMs,
    commandTimeout: instance.timeoutMs,
    retryStrategy: () => null,
    // A stream that will not close politely is destroyed quickly instead of holding the process.
    disconnectTimeout: 200,
    ...(instance.closeConnectionOnReadonlyError
      ? {
          // 1: reconnect (to whatever the mode names as master now) without resending.
          reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 1 : false),
        }
      : {}),
    ...fixedCredentials(instance.auth),
  };
}

/** One instance's client, not yet connected, and the handles the store needs on it. */
export interface InstanceClient {
  readonly client: CounterClient;
  readonly isCluster: boolean;
  /** The option objects new connections are made from, where fresh credentials go. */
  credentialTargets(): NodeOptions[];
}

/**
 * Creates the client the instance's REDIS_TYPE asks for. Throws a TlsFileError naming the
 * setting of a TLS file that cannot be used.
 */
export function createInstanceClient(instance: RedisInstanceSettings): InstanceClient {
  const tls =
    instance.tls === undefined ? undefined : tlsOptions(instance.tls, instance.settingPrefix);
  const node = { ...nodeOptions(instance), ...(tls === undefined ? {} : { tls }) };
  if (instance.type === 'cluster') {
    const cluster = createCluster(instance, node, tls);
    return {
      client: defineCounterScripts(cluster),
      isCluster: true,
      credentialTargets: () => [
        cluster.options.redisOptions ?? {},
        ...cluster.nodes('all').map((n) => n.options),
      ],
    };
  }
  let client: Redis;
  if (instance.type === 'sentinel') {
    client = new Redis(sentinelOptions(instance, node, tls));
  } else {
    const address = addressOptions(instance);
    client =
      typeof address === 'string' ? new Redis(address, node) : new Redis({ ...address, ...node });
  }
  return {
    client: defineCounterScripts(client),
    isCluster: false,
    credentialTargets: () => [client.options],
  };
}

/** Lets the client reconnect on its own after the first connection, or stops it doing so. */
export function setReconnecting(client: Redis | Cluster, isOn: boolean): void {
  const strategy = isOn ? runtimeRetryDelayMs : () => null;
  if (client instanceof Cluster) client.options.clusterRetryStrategy = strategy;
  else client.options.retryStrategy = strategy;
}

/** The error of a failed connection, with what to change when the settings can say it. */
function explain(err: unknown, instance: RedisInstanceSettings): string {
  const message = describeError(err);
  const hint = tlsHint(err, instance.settingPrefix, instance.tls !== undefined);
  return hint === undefined ? message : `${message} (${hint})`;
}

/**
 * Decides after each failed first attempt whether to try again, until maxElapsedMs passes: a
 * warning at the first failure and at a new reason, each retry alike a debug line.
 */
function retryUntilGivenUp(
  instance: RedisInstanceSettings,
  startup: StartupBackoff,
  logger: Logger,
  disconnect: () => void,
): (err: unknown, attempt: number) => boolean {
  // The waits between attempts are real timers, so the time they add up to is measured on
  // the monotonic clock they run on: an injected test clock stands still meanwhile, and the
  // wall clock may be stepped.
  const startedAt = performance.now();
  const target = describeInstance(instance);
  const attempts = new StateLog(logger);
  return (err, attempt) => {
    const elapsed = performance.now() - startedAt;
    const error = explain(err, instance);
    if (startup.maxElapsedMs > 0 && elapsed >= startup.maxElapsedMs) {
      logger.error('giving up connecting to redis', { target, attempts: attempt - 1, error });
      return false;
    }
    attempts.failed('cannot connect to redis yet, retrying', error, { target, attempt, error });
    disconnect();
    return true;
  };
}

/**
 * Opens the first connection, retrying with exponential backoff until it succeeds or
 * maxElapsedMs passes; afterwards the client reconnects on its own, for ever. Credentials
 * from `source` are fetched before every attempt.
 */
export async function connectWithBackoff(
  handle: InstanceClient,
  instance: RedisInstanceSettings,
  source: CredentialSource | undefined,
  startup: StartupBackoff,
  logger: Logger,
): Promise<void> {
  const { client } = handle;
  const target = describeInstance(instance);
  // connect() rejects with a bare "Connection is closed."; the cause arrives as an 'error' event
  // (a cluster's as 'node error'; on later attempts sometimes not at all, so the last one seen
  // is kept).
  const seen: { cause?: Error | undefined } = {};
  const onError = (err: Error): void => {
    seen.cause = err;
  };
  client.on('error', onError);
  client.on('node error', onError);
  try {
    await backOff(
      async () => {
        if (source !== undefined) applyCredentials(handle.credentialTargets(), await source.next());
        try {
          await client.connect();
        } catch (err: unknown) {
          throw seen.cause ?? err;
        }
      },
      {
        startingDelay: startup.initialIntervalMs,
        maxDelay: startup.maxIntervalMs,
        numOfAttempts: Number.MAX_SAFE_INTEGER,
        timeMultiple: 2,
        jitter: 'none',
        retry: retryUntilGivenUp(instance, startup, logger, () => {
          client.disconnect();
        }),
      },
    );
  } catch (err: unknown) {
    throw new Error(`cannot connect to ${target}: ${explain(err, instance)}`, { cause: err });
  } finally {
    client.off('error', onError);
    client.off('node error', onError);
  }
  setReconnecting(client, true);
}
