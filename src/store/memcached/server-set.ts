// One list of memcached servers behind a memjs Client: the counter commands in the binary protocol.
import memjs from 'memjs';
import type { MemcachedResponse } from './connection';
import type { ServerPool } from './server-pool';
import { serverIndexFor } from './server-selection';

const OPCODE = Object.freeze({ get: 0x00, increment: 0x05, decrement: 0x06 });
const STATUS = Object.freeze({ ok: 0x0000, keyNotFound: 0x0001 });

/** In an arithmetic request, this expiry means "do not create a missing key". */
const NO_CREATE = 0xffffffff;

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

/** The binary protocol's words for the statuses a counter command can meet. */
const STATUS_TEXT: Readonly<Record<number, string>> = Object.freeze({
  0x0004: 'invalid arguments',
  0x0005: 'item not stored',
  0x0006: 'the stored value is not a number',
  0x0081: 'unknown command',
  0x0082: 'out of memory',
  0x0086: 'temporary failure',
});

function describeStatus(status: number): string {
  return STATUS_TEXT[status] ?? `status 0x${status.toString(16).padStart(4, '0')}`;
}

/** The 64-bit counter of an arithmetic reply; counts stay far below 2^53. */
function counterValue(response: MemcachedResponse): number {
  return response.val.length >= 8 ? Number(response.val.readBigUInt64BE(0)) : 0;
}

/** A GET reply's value: memcached keeps counters as decimal text (the reference's too). */
function storedValue(response: MemcachedResponse): number {
  const value = Number.parseInt(response.val.toString('latin1'), 10);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * A fixed list of servers. Each key goes to the server at CRC-32(key) mod the list's length,
 * the reference's choice. memjs builds and dispatches the requests; its retries and failover
 * are off, since a retried increment could count twice and a failed-over key would be
 * counted on a server the reference does not read.
 */
export class ServerSet {
  private readonly client: memjs.Client;

  constructor(
    readonly addresses: readonly string[],
    readonly pools: readonly ServerPool[],
  ) {
    // memjs's Client only calls the members MemjsServerSide lists.
    this.client = new memjs.Client(pools as unknown as memjs.Server[], {
      retries: 0,
      failover: false,
      logger: { log: () => undefined },
    });
    const count = pools.length;
    // @types/memjs declares a string; memjs indexes its server array with whatever it gets.
    this.client.getServer = (key: string): string => String(serverIndexFor(key, count));
  }

  /** The pool that holds `key`. */
  poolFor(key: string): ServerPool | undefined {
    return this.pools[serverIndexFor(key, this.pools.length)];
  }

  private perform(key: string, request: Buffer): Promise<MemcachedResponse> {
    return new Promise((resolve, reject) => {
      this.client.incrSeq();
      this.client.perform(
        key,
        request,
        this.client.seq,
        (err: Error | null, response?: unknown) => {
          if (err !== null) reject(err);
          else resolve(response as MemcachedResponse);
        },
      );
    });
  }

  /**
   * Adds `delta`, or creates the key with `delta` and the expiry when it is missing, in one
   * atomic step. An existing key keeps the expiry it was created with, as with the reference.
   */
  async increment(key: string, delta: number, expiry: number): Promise<number> {
    const extras = memjs.Utils.makeAmountInitialAndExpiration(delta, delta, expiry);
    const response = await this.perform(
      key,
      memjs.Utils.makeRequestBuffer(OPCODE.increment, key, extras, '', 0),
    );
    if (response.header.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.header.status,
        `increment refused: ${describeStatus(response.header.status)}`,
      );
    }
    return counterValue(response);
  }

  /** Subtracts `delta`, flooring at 0 as memcached does; a missing key stays missing (0). */
  async decrement(key: string, delta: number): Promise<number> {
    const extras = memjs.Utils.makeAmountInitialAndExpiration(delta, 0, NO_CREATE);
    const response = await this.perform(
      key,
      memjs.Utils.makeRequestBuffer(OPCODE.decrement, key, extras, '', 0),
    );
    if (response.header.status === STATUS.keyNotFound) return 0;
    if (response.header.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.header.status,
        `decrement refused: ${describeStatus(response.header.status)}`,
      );
    }
    return counterValue(response);
  }

  /** The stored count, undefined when the key is missing. */
  async get(key: string): Promise<number | undefined> {
    const response = await this.perform(
      key,
      memjs.Utils.makeRequestBuffer(OPCODE.get, key, '', '', 0),
    );
    if (response.header.status === STATUS.keyNotFound) return undefined;
    if (response.header.status !== STATUS.ok) {
      throw new MemcachedReplyError(
        response.header.status,
        `get refused: ${describeStatus(response.header.status)}`,
      );
    }
    return storedValue(response);
  }
}
