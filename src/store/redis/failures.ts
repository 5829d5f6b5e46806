// A failed Redis call in an operator's words: ioredis's rejections become the address and the
// reason (`unreachable (10.0.0.7:6379): connection refused`), the server's own replies stay.
import { describeError } from '../../lib/errors';
import { StoreError } from '../errors';

/** What the instance knows when one of its calls fails. */
export interface FailureContext {
  /** The instance's address, safe for logs (credentials masked). */
  readonly address: string;
  /** Whether the client is connected now, as ioredis's status says. */
  readonly isConnected: boolean;
  /** One connection (single or sentinel), not a cluster's many. */
  readonly isSingleConnection: boolean;
  /** Why the last connection attempt failed, in words; undefined when none has. */
  readonly connectionCause: string | undefined;
  readonly timeoutMs: number;
}

/**
 * The sentences ioredis 6.0.0 rejects a call with when it cannot send it, in words
 * (test/contract/redis/ioredis-behaviour.test.ts checks each).
 */
export const IOREDIS_REJECTIONS: Readonly<Record<string, string>> = Object.freeze({
  "Stream isn't writeable and enableOfflineQueue options is false": 'not connected',
  "Cluster isn't ready and enableOfflineQueue options is false": 'cluster not connected',
  'Connection is closed.': 'connection closed',
  'the cluster is not connected': 'cluster not connected',
});

/** The sentence ioredis (and the cluster batcher) rejects a call with at its command timeout. */
export const IOREDIS_TIMEOUT = 'Command timed out';

function isReply(err: unknown): boolean {
  return err instanceof Error && err.name === 'ReplyError';
}

/**
 * Whether ioredis refused to send because its one connection is gone while its status still says
 * ready. ioredis changes the status when the socket's close event arrives, after the socket has
 * stopped being writable; a call sent in between is refused with its "cannot send" sentence. That
 * call is the outage's first failure: describing it as connected would count it apart from the
 * outage, and the outage's closing line would then count one failure fewer than the statistic.
 * A cluster's status is the cluster's, not one node connection's, so there it proves nothing.
 */
function isLostUnnoticed(words: string | undefined, context: FailureContext): boolean {
  return context.isConnected && context.isSingleConnection && words !== undefined;
}

/**
 * The error the caller gets for `err`. While the client is not connected every failure is the
 * server being unreachable, with the last connection failure as its reason; a timeout names
 * the address and the time waited; a server's error reply is kept as Redis wrote it.
 */
export function describeFailure(err: StoreError, context: FailureContext): StoreError {
  const cause: unknown = err.cause ?? err;
  if (err.unreachable !== undefined || isReply(cause)) return err;
  const message = describeError(cause);
  if (message === IOREDIS_TIMEOUT) {
    return new StoreError(
      'redis',
      `no answer from ${context.address} within ${context.timeoutMs} ms`,
      true,
      { cause },
    );
  }
  const words = IOREDIS_REJECTIONS[message];
  if (isLostUnnoticed(words, context)) {
    return new StoreError('redis', 'connection closed', true, {
      cause,
      unreachable: context.address,
    });
  }
  if (!context.isConnected) {
    return new StoreError('redis', context.connectionCause ?? words ?? message, true, {
      cause,
      unreachable: context.address,
    });
  }
  return words === undefined ? err : new StoreError('redis', words, true, { cause });
}
