// Builds and opens one ioredis client from the settings of one Redis instance.
import { describeError } from '../../lib/errors';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { backOff } from 'exponential-backoff';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../../lib/logger';
import { maskCredentialsInUrl } from '../../lib/mask';
import type { RedisAuthSettings, RedisInstanceSettings } from '../../settings';

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

function credentials(auth: RedisAuthSettings): { username?: string; password?: string } {
  switch (auth.kind) {
    case 'none':
      return {};
    case 'static':
      return auth.username === undefined
        ? { password: auth.password }
        : { username: auth.username, password: auth.password };
    case 'file': {
      // Re-read on every connection attempt so rotated credentials take effect.
      const text = readFileSync(auth.path, 'utf8').trim();
      const colon = text.indexOf(':');
      return colon < 0
        ? { password: text }
        : { username: text.slice(0, colon), password: text.slice(colon + 1) };
    }
  }
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
  return `${instance.socketType} ${maskCredentialsInUrl(instance.url)}`;
}

/** Creates the client, not yet connected. */
export function createClient(instance: RedisInstanceSettings): Redis {
  const options = {
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
      ? { reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 1 : false) }
      : {}),
    ...credentials(instance.auth),
  } satisfies RedisOptions;
  const address = addressOptions(instance);
  const client =
    typeof address === 'string'
      ? new Redis(address, options)
      : new Redis({ ...address, ...options });
  if (instance.auth.kind === 'file') {
    const auth = instance.auth;
    client.on('reconnecting', () => {
      try {
        Object.assign(client.options, credentials(auth));
      } catch {
        // Keep the previous credentials; the connection attempt reports the failure.
      }
    });
  }
  return client;
}

/**
 * Opens the first connection, retrying with exponential backoff until it succeeds or
 * maxElapsedMs passes; afterwards the client reconnects on its own, for ever.
 */
export async function connectWithBackoff(
  client: Redis,
  instance: RedisInstanceSettings,
  startup: StartupBackoff,
  logger: Logger,
): Promise<void> {
  // The waits between attempts are real timers, so the time they add up to is measured on
  // the monotonic clock they run on: an injected test clock stands still meanwhile, and the
  // wall clock may be stepped.
  const startedAt = performance.now();
  const target = describeInstance(instance);
  // connect() rejects with a bare "Connection is closed."; the cause arrives as an 'error' event
  // (on later attempts sometimes not at all, so the last one seen is kept).
  let cause: Error | undefined;
  const onError = (err: Error): void => {
    cause = err;
  };
  client.on('error', onError);
  try {
    await backOff(
      async () => {
        if (instance.auth.kind === 'file')
          Object.assign(client.options, credentials(instance.auth));
        try {
          await client.connect();
        } catch (err: unknown) {
          throw cause ?? err;
        }
      },
      {
        startingDelay: startup.initialIntervalMs,
        maxDelay: startup.maxIntervalMs,
        numOfAttempts: Number.MAX_SAFE_INTEGER,
        timeMultiple: 2,
        jitter: 'none',
        retry: (err: unknown, attempt: number) => {
          const elapsed = performance.now() - startedAt;
          const message = describeError(err);
          if (startup.maxElapsedMs > 0 && elapsed >= startup.maxElapsedMs) {
            logger.error('giving up connecting to redis', {
              target,
              attempts: attempt - 1,
              error: message,
            });
            return false;
          }
          logger.warn('cannot connect to redis yet, retrying', { target, attempt, error: message });
          client.disconnect();
          return true;
        },
      },
    );
  } catch (err: unknown) {
    const message = describeError(err);
    throw new Error(`cannot connect to ${target}: ${message}`, { cause: err });
  } finally {
    client.off('error', onError);
  }
  client.options.retryStrategy = runtimeRetryDelayMs;
}
