// The sliding-window and token-bucket parts of a batch: their commands and what their replies mean.
import type {
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { StoreError } from '../errors';
import type { CounterCommand } from './commands';
import { pushChange, toStoreError, type PipelineOp, type Reply } from './ops';

function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return 0;
}

const short = (): StoreError =>
  new StoreError('redis', 'the pipeline returned fewer replies than commands', true);

/**
 * Per change: INCRBY + EXPIRE of the current window (or the floored decrement of a refund), then
 * GET of the previous window. In a cluster the two keys may sit in different slots: each command
 * goes to its own node in that node's pipeline, still one round trip.
 */
export class SlidingWindowOp implements PipelineOp {
  readonly commands: CounterCommand[] = [];

  constructor(
    private readonly items: readonly SlidingWindowChange[],
    private readonly resolve: (values: SlidingWindowCounts[]) => void,
    private readonly reject: (err: StoreError) => void,
  ) {
    for (const { current, previousKey } of items) {
      pushChange(this.commands, current);
      this.commands.push({ name: 'get', key: previousKey });
    }
  }

  settle(replies: readonly Reply[]): void {
    const out: SlidingWindowCounts[] = [];
    let at = 0;
    for (const { current } of this.items) {
      const changed = replies[at];
      const expired = current.isNegative ? changed : replies[at + 1];
      at += current.isNegative ? 1 : 2;
      const previous = replies[at];
      at += 1;
      if (changed === undefined || expired === undefined || previous === undefined) {
        this.reject(short());
        return;
      }
      const failed = changed[0] ?? expired[0] ?? previous[0];
      if (failed !== null) {
        this.reject(toStoreError(failed));
        return;
      }
      out.push({
        current: asNumber(changed[1]),
        previous: previous[1] === null ? 0 : asNumber(previous[1]),
      });
    }
    this.resolve(out);
  }

  fail(err: unknown): void {
    this.reject(toStoreError(err));
  }
}

/** A script step's arguments after its key: now, emission, tolerance, hits, refund. */
export function tokenBucketArgs(item: TokenBucketChange): string[] {
  return [
    String(item.nowUs),
    String(item.emissionUs),
    String(item.toleranceUs),
    String(item.hits),
    item.isNegative ? '1' : '0',
  ];
}

/** Sends one command on its own through the instance's client (which routes it in a cluster). */
export type SendAlone = (command: CounterCommand) => Promise<unknown>;

/**
 * Per change: EVALSHA of the token bucket script on its key (one key: fine in a cluster). A
 * server that does not know the script (restarted, failed over, SCRIPT FLUSH) answers NOSCRIPT
 * without running anything; that step is sent again by EVAL, which also stores the script on
 * that server: loaded once per server, and again after each NOSCRIPT.
 */
export class TokenBucketOp implements PipelineOp {
  readonly commands: CounterCommand[];

  constructor(
    private readonly items: readonly TokenBucketChange[],
    private readonly resolve: (values: TokenBucketState[]) => void,
    private readonly reject: (err: StoreError) => void,
    private readonly sendAlone: SendAlone,
  ) {
    this.commands = items.map((item) => ({
      name: 'tokenBucket',
      key: item.key,
      args: tokenBucketArgs(item),
    }));
  }

  private async step(index: number, reply: Reply | undefined): Promise<TokenBucketState> {
    const command = this.commands[index];
    if (reply === undefined || command?.name !== 'tokenBucket') throw short();
    let value = reply[1];
    if (reply[0] !== null) {
      if (!reply[0].message.startsWith('NOSCRIPT')) throw toStoreError(reply[0]);
      value = await this.sendAlone({ ...command, name: 'tokenBucketEval' });
    }
    const pair = Array.isArray(value) ? value : [];
    return { isAdmitted: asNumber(pair[0]) === 1, tatUs: asNumber(pair[1]) };
  }

  settle(replies: readonly Reply[]): void {
    Promise.all(this.items.map((_, i) => this.step(i, replies[i]))).then(
      this.resolve,
      (err: unknown) => {
        this.reject(toStoreError(err));
      },
    );
  }

  fail(err: unknown): void {
    this.reject(toStoreError(err));
  }
}
