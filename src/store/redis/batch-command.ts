// One ioredis command that carries a whole batch: one write, one timer, one queue entry.
import { Command, type Redis } from 'ioredis';
import { TOKEN_BUCKET_SHA, type CounterCommand } from './commands';
import type { Reply } from './ops';

type QueueItem = NonNullable<ReturnType<Redis['commandQueue']['peekBack']>>;

/** What a released command holds instead of its replies; never written to (see take()). */
const NO_REPLIES: Reply[] = [];

/**
 * Whether the batch command can write `command` itself. The token bucket's EVALSHA can: its
 * NOSCRIPT reply answers that command alone, and the op resends it as EVAL. The floored
 * decrement goes through ioredis's pipeline, whose script command loads the script itself.
 */
export function isPlain(command: CounterCommand): boolean {
  return (
    command.name === 'incrby' ||
    command.name === 'expire' ||
    command.name === 'get' ||
    command.name === 'tokenBucket'
  );
}

/** RESP bulk string; keys are measured in bytes, as Redis reads them. */
function bulk(value: string): string {
  return `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
}

/** The command in the protocol's array form, as redis-cli or a driver would write it. */
export function encodePlain(command: CounterCommand): string {
  switch (command.name) {
    case 'incrby':
      return `*3\r\n$6\r\nINCRBY\r\n${bulk(command.key)}${bulk(String(command.hits))}`;
    case 'expire':
      return `*3\r\n$6\r\nEXPIRE\r\n${bulk(command.key)}${bulk(String(command.ttlSeconds))}`;
    case 'get':
      return `*2\r\n$3\r\nGET\r\n${bulk(command.key)}`;
    case 'tokenBucket': {
      // One key (the script's KEYS[1]); the rest are its ARGV.
      let text = `*${4 + command.args.length}\r\n$7\r\nEVALSHA\r\n$40\r\n${TOKEN_BUCKET_SHA}\r\n$1\r\n1\r\n${bulk(command.key)}`;
      for (const arg of command.args) text += bulk(arg);
      return text;
    }
    case 'decrementFloored':
    case 'tokenBucketEval':
      throw new Error(`${command.name} is not a plain command`);
  }
}

/**
 * ioredis answers each queued command with exactly one reply. This command is written as the
 * protocol text of many commands at once and puts itself back at the head of the client's
 * command queue until it has taken one reply for each of them (as ioredis does itself for a
 * SUBSCRIBE to several channels), so a batch of N commands costs one Command, one promise,
 * one timer and one socket write instead of N of each plus a Pipeline. Replies stay in order
 * on the connection, so the queue stays in step with the server whatever else is sent on it.
 *
 * An error reply (WRONGTYPE, READONLY ...) answers only its own command. Any other rejection
 * comes from the client: the connection closed (the queue was flushed), the stream was not
 * writable, or the timeout fired; then the whole batch fails at once. After a timeout the
 * command still takes its late replies, so the queue stays in step.
 *
 * The client's command queue and reply dispatch are ioredis internals: package.json pins the
 * version this was written against, and test/contract/redis/ioredis-behaviour.test.ts names
 * each behaviour relied on, so an upgrade that changes one fails there.
 */
export class BatchCommand extends Command {
  private replies: Reply[];
  private taken = 0;
  /** Cleared once the outcome is delivered (see finish()). */
  private deliver: ((outcome: readonly Reply[] | Error) => void) | undefined;
  /** Whether the client dropped this command from its queue (flushed on close). */
  private isDropped = false;
  private timer: NodeJS.Timeout | undefined;
  /** The client's queue entry for this command, put back while replies are still due. */
  private item: QueueItem | undefined;

  constructor(
    private readonly client: Redis,
    private payload: string,
    private readonly count: number,
    deliver: (outcome: readonly Reply[] | Error) => void,
  ) {
    super('incrby', []);
    this.deliver = deliver;
    this.replies = new Array<Reply>(count);
    this.resolve = (value: unknown): void => {
      // As ioredis's own commands answer: bulk strings as UTF-8 text, not bytes.
      this.take([null, Buffer.isBuffer(value) ? value.toString() : value]);
    };
    this.reject = (err: Error): void => {
      if (err.name === 'ReplyError' && !this.isDropped) this.take([err, null]);
      else this.drop(err);
    };
  }

  /** Writes the batch; the outcome arrives through `deliver`, exactly once. */
  send(): void {
    void this.client.sendCommand(this);
    // Queued at the back unless the client refused it (then reject() has run already).
    const item = this.client.commandQueue.peekBack();
    if (item?.command === this) this.item = item;
  }

  override toWritable(): string {
    return this.payload;
  }

  /** ioredis arms its command timeout here; one timer answers for the whole batch. */
  override setTimeout(ms: number): void {
    this.timer ??= setTimeout(() => {
      this.finish(new Error('Command timed out'));
    }, ms);
  }

  private take(reply: Reply): void {
    // After a timeout the replies are only counted: nobody is waiting for them.
    if (this.deliver !== undefined) this.replies[this.taken] = reply;
    this.taken += 1;
    if (this.taken < this.count && this.item !== undefined) {
      // The reply was shifted off the queue with this command; the next one is ours too.
      this.client.commandQueue.unshift(this.item);
      return;
    }
    this.item = undefined;
    this.finish(this.replies);
  }

  private drop(err: Error): void {
    this.isDropped = true;
    this.item = undefined;
    this.finish(err);
  }

  private finish(outcome: readonly Reply[] | Error): void {
    const deliver = this.deliver;
    if (deliver === undefined) return;
    clearTimeout(this.timer);
    this.release();
    deliver(outcome);
  }

  /**
   * A finished command can stay reachable for a while from objects the young-generation GC
   * treats as live (old-space garbage, the client's internals). Whatever it still points at
   * then survives every scavenge and is promoted, the batch's ops, their promises and each
   * request's state with it, which makes the old generation's collections frequent. So it lets
   * go of all of it before delivering. The queue entry stays until the last reply is taken
   * (take()).
   */
  private release(): void {
    this.deliver = undefined;
    this.timer = undefined;
    this.payload = '';
    this.replies = NO_REPLIES;
  }
}
