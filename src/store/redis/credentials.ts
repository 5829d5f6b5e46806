// Credentials for every connection attempt: fixed, re-read from a file, or a fresh IAM token.
import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import { describeError } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import type { RedisAuthSettings } from '../../settings';
import type { IamTokenProvider } from './iam-token';

/**
 * ioredis's options without replyMapping, whose declared type (`| undefined`) its own
 * constructors refuse under exactOptionalPropertyTypes.
 */
export type NodeOptions = Omit<RedisOptions, 'replyMapping'>;

export interface Credentials {
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/** Where a connection's credentials come from; asked before every connection attempt. */
export interface CredentialSource {
  /** Credentials for the next connection attempt; rejects when none can be had. */
  next(): Promise<Credentials>;
  /**
   * How often to ask again in the background, so that a connection opened at any moment (a
   * reconnection, a new cluster node) already holds valid credentials; undefined: never.
   */
  readonly refreshIntervalMs: number | undefined;
}

/** `password` or `username:password`. */
function parse(text: string): Credentials {
  const colon = text.indexOf(':');
  return colon < 0
    ? { username: undefined, password: text }
    : { username: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** IAM tokens live 15 minutes and are replaced 5 minutes before their end: check every minute. */
const IAM_REFRESH_INTERVAL_MS = 60_000;

/** Fixed credentials, as client options; none for a file or a token (see credentialSource). */
export function fixedCredentials(
  auth: RedisAuthSettings,
): Pick<NodeOptions, 'username' | 'password'> {
  if (auth.kind !== 'static') return {};
  return auth.username === undefined
    ? { password: auth.password }
    : { username: auth.username, password: auth.password };
}

/** Credentials that change while the service runs, or undefined when they are fixed. */
export function credentialSource(
  auth: RedisAuthSettings,
  iam: IamTokenProvider | undefined,
): CredentialSource | undefined {
  if (iam !== undefined) {
    return {
      next: async () => ({ username: iam.username, password: await iam.token() }),
      refreshIntervalMs: IAM_REFRESH_INTERVAL_MS,
    };
  }
  if (auth.kind !== 'file') return undefined;
  return {
    // Re-read on every attempt so rotated credentials take effect.
    next: () => {
      try {
        return Promise.resolve(parse(readFileSync(auth.path, 'utf8').trim()));
      } catch (err: unknown) {
        return Promise.reject(err instanceof Error ? err : new Error(describeError(err)));
      }
    },
    refreshIntervalMs: undefined,
  };
}

/** Writes credentials into the option objects the next connections are made from. */
export function applyCredentials(targets: readonly NodeOptions[], credentials: Credentials): void {
  for (const options of targets) {
    options.username = credentials.username;
    options.password = credentials.password;
  }
}

/**
 * Keeps the targets' credentials fresh: on every `reconnecting` of the emitter (the retry delay
 * leaves time for an IAM token to be signed) and every refreshIntervalMs. Returns a stop function.
 * A failure keeps the previous credentials; the connection attempt then reports what is wrong.
 */
export function keepCredentialsFresh(
  emitter: { on(event: 'reconnecting', listener: () => void): unknown },
  targets: () => readonly NodeOptions[],
  source: CredentialSource,
  logger: Logger,
  target: string,
): () => void {
  const refresh = (): void => {
    source.next().then(
      (credentials) => {
        applyCredentials(targets(), credentials);
      },
      (err: unknown) => {
        logger.warn('cannot renew redis credentials; keeping the previous ones', {
          target,
          error: describeError(err),
        });
      },
    );
  };
  emitter.on('reconnecting', refresh);
  if (source.refreshIntervalMs === undefined) return () => undefined;
  const timer = setInterval(refresh, source.refreshIntervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
}
