// One list of memcached servers: each key's counter commands sent to the server that holds it.
import {
  counterValue,
  decrementRequest,
  describeStatus,
  getRequest,
  incrementRequest,
  STATUS,
  storedValue,
  type MemcachedResponse,
} from './binary-protocol';
import type { ServerPool } from './server-pool';
import { serverIndexFor } from './server-selection';

/** memcached answered, and the answer is an error (a reply, not a connection problem). */
export class MemcachedReplyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'MemcachedReplyError';
  }
}

/**
 * A fixed list of servers. Each key goes to the server at CRC-32(key) mod the list's length,
 * the reference's choice. There is no retry and no failover: a retried increment could count
 * twice, and a failed-over key would be counted on a server the reference does not read.
 */
export class ServerSet {
  constructor(
    readonly addresses: readonly string[],
    readonly pools: readonly ServerPool[],
  ) {}

  /** The pool that holds `key`. */
  poolFor(key: string): ServerPool | undefined {
    return this.pools[serverIndexFor(key, this.pools.length)];
  }

  private perform(key: string, request: Buffer): Promise<MemcachedResponse> {
    const pool = this.poolFor(key);
    if (pool === undefined) return Promise.reject(new Error('no memcached server is configured'));
    return pool.send(request);
  }

  /**
   * Adds `delta`, or creates the key with `delta` and the expiry when it is missing, in one
   * atomic step. An existing key keeps the expiry it was created with, as with the reference.
   */
  async increment(key: string, delta: number, expiry: number): Promise<number> {
    const response = await this.perform(key, incrementRequest(key, delta, expiry));
    if (response.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.status,
        `increment refused: ${describeStatus(response.status)}`,
      );
    }
    return counterValue(response);
  }

  /** Subtracts `delta`, flooring at 0 as memcached does; a missing key stays missing (0). */
  async decrement(key: string, delta: number): Promise<number> {
    const response = await this.perform(key, decrementRequest(key, delta));
    if (response.status === STATUS.keyNotFound) return 0;
    if (response.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.status,
        `decrement refused: ${describeStatus(response.status)}`,
      );
    }
    return counterValue(response);
  }

  /** The stored count, undefined when the key is missing. */
  async get(key: string): Promise<number | undefined> {
    const response = await this.perform(key, getRequest(key));
    if (response.status === STATUS.keyNotFound) return undefined;
    if (response.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.status,
        `get refused: ${describeStatus(response.status)}`,
      );
    }
    return storedValue(response);
  }
}
