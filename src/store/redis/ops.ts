// One request's part of a batch: the commands it needs and how it turns their replies into values.
import { describeError } from '../../lib/errors';
import type { CounterIncrement } from '../counter-store';
import { StoreError } from '../errors';
import type { CounterCommand } from './commands';

/** A command's outcome: an error, or null and the reply. */
export type Reply = readonly [Error | null, unknown];

/**
 * The commands of one counter change: INCRBY + EXPIRE (every counted key gets its expiry, as
 * the reference does), or the floored decrement of a refund. One reply each.
 */
export function pushChange(commands: CounterCommand[], change: CounterIncrement): void {
  if (change.isNegative) {
    commands.push({
      name: 'decrementFloored',
      key: change.key,
      hits: change.hits,
      ttlSeconds: change.ttlSeconds,
    });
  } else {
    commands.push(
      { name: 'incrby', key: change.key, hits: change.hits },
      { name: 'expire', key: change.key, ttlSeconds: change.ttlSeconds },
    );
  }
}

/** One request's commands, answered once all their replies are in. */
export interface PipelineOp {
  /** The commands, in order; settle() receives one reply for each. */
  readonly commands: readonly CounterCommand[];
  settle(replies: readonly Reply[]): void;
  /** The batch could not be sent or answered as a whole. */
  fail(err: unknown): void;
}

/** One op's replies; an op that throws on them fails alone, and the others still settle. */
export function settleSafely(op: PipelineOp, replies: readonly Reply[]): void {
  try {
    op.settle(replies);
  } catch (err: unknown) {
    op.fail(err);
  }
}

/**
 * What a counter pushed past int64 reads as. INCRBY refuses to overflow and leaves the key
 * as it is, so the key is certainly over any limit (limits are 32-bit): the request is
 * answered OVER_LIMIT until the key expires, instead of failing every call on it.
 */
const SATURATED = 2 ** 63;

function isOverflow(err: Error | null): boolean {
  return err !== null && err.message.includes('increment or decrement would overflow');
}

/** Maps anything the driver throws to a StoreError. */
export function toStoreError(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = describeError(err);
  // Replies from the server (WRONGTYPE, NOSCRIPT ...) are not cured by retrying; the rest are.
  const isReply =
    err instanceof Error &&
    err.name === 'ReplyError' &&
    !message.startsWith('READONLY') &&
    !message.startsWith('LOADING') &&
    !message.startsWith('CLUSTERDOWN') &&
    !message.startsWith('TRYAGAIN') &&
    !message.startsWith('MOVED') &&
    !message.startsWith('ASK');
  return new StoreError('redis', message, !isReply, { cause: err });
}

function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return 0;
}

/** One request's increments: INCRBY + EXPIRE per key, or the floored decrement. */
export class IncrementOp implements PipelineOp {
  readonly commands: CounterCommand[] = [];

  constructor(
    private readonly items: readonly CounterIncrement[],
    private readonly resolve: (values: number[]) => void,
    private readonly reject: (err: StoreError) => void,
  ) {
    for (const item of items) pushChange(this.commands, item);
  }

  settle(replies: readonly Reply[]): void {
    const values = new Array<number>(this.items.length);
    let at = 0;
    for (let i = 0; i < this.items.length; i++) {
      const isNegative = this.items[i]?.isNegative === true;
      const reply = replies[at];
      // The EXPIRE's reply matters too: a key left without expiry would count for ever.
      const expireReply = isNegative ? undefined : replies[at + 1];
      at += isNegative ? 1 : 2;
      if (reply === undefined || (!isNegative && expireReply === undefined)) {
        this.reject(
          new StoreError('redis', 'the pipeline returned fewer replies than commands', true),
        );
        return;
      }
      const isSaturated = isOverflow(reply[0]);
      const failed = (isSaturated ? null : reply[0]) ?? expireReply?.[0] ?? null;
      if (failed !== null) {
        this.reject(toStoreError(failed));
        return;
      }
      values[i] = isSaturated ? SATURATED : asNumber(reply[1]);
    }
    this.resolve(values);
  }

  fail(err: unknown): void {
    this.reject(toStoreError(err));
  }
}

/** One request's reads. */
export class ReadOp implements PipelineOp {
  readonly commands: CounterCommand[];

  constructor(
    keys: readonly string[],
    private readonly resolve: (values: number[]) => void,
    private readonly reject: (err: StoreError) => void,
  ) {
    this.commands = keys.map((key) => ({ name: 'get', key }));
  }

  settle(replies: readonly Reply[]): void {
    const out: number[] = [];
    for (const reply of replies) {
      if (reply[0] !== null) {
        this.reject(toStoreError(reply[0]));
        return;
      }
      out.push(reply[1] === null ? 0 : asNumber(reply[1]));
    }
    this.resolve(out);
  }

  fail(err: unknown): void {
    this.reject(toStoreError(err));
  }
}
