// The sliding-window and token-bucket parts of a pipeline: their commands and replies.
import { createHash } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type {
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from '../counter-store';
import { StoreError } from '../errors';
import { TOKEN_BUCKET_LUA } from '../token-bucket';
import type { PipelineOp } from './batcher';

type Reply = [Error | null, unknown];

/** The token bucket script's SHA1, as EVALSHA names it. */
export const TOKEN_BUCKET_SHA = createHash('sha1').update(TOKEN_BUCKET_LUA).digest('hex');

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

function asNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return Number(value);
  return 0;
}

const SHORT = (): StoreError =>
  new StoreError('redis', 'the pipeline returned fewer replies than commands', true);

/**
 * Per change: INCRBY + EXPIRE of the current window (or the floored decrement of a refund),
 * then GET of the previous window, all in the shared pipeline.
 */
export class SlidingWindowOp implements PipelineOp {
  constructor(
    private readonly items: readonly SlidingWindowChange[],
    private readonly resolve: (values: SlidingWindowCounts[]) => void,
    private readonly reject: (err: unknown) => void,
    private readonly toError: (err: unknown) => StoreError,
  ) {}

  append(pipeline: ChainableCommander): number {
    let count = 0;
    for (const { current, previousKey } of this.items) {
      if (current.isNegative) {
        (
          pipeline as ChainableCommander & {
            decrementFloored(key: string, hits: number, ttl: number): ChainableCommander;
          }
        ).decrementFloored(current.key, current.hits, current.ttlSeconds);
        count += 1;
      } else {
        pipeline.incrby(current.key, current.hits).expire(current.key, current.ttlSeconds);
        count += 2;
      }
      pipeline.get(previousKey);
      count += 1;
    }
    return count;
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
        this.reject(SHORT());
        return;
      }
      const failed = changed[0] ?? expired[0] ?? previous[0];
      if (failed !== null) {
        this.reject(this.toError(failed));
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
    this.reject(this.toError(err));
  }
}

/** Runs the script again with EVAL, which also stores it on that server for the next EVALSHA. */
export type ScriptReload = (item: TokenBucketChange) => Promise<unknown>;

/**
 * Per change: EVALSHA of the token bucket script on its key. A server that does not know the
 * script (restarted, failed over, SCRIPT FLUSH) answers NOSCRIPT without running anything; that
 * step is sent again with EVAL, so the script is loaded once per server and again after each
 * NOSCRIPT.
 */
export class TokenBucketOp implements PipelineOp {
  constructor(
    private readonly items: readonly TokenBucketChange[],
    private readonly resolve: (values: TokenBucketState[]) => void,
    private readonly reject: (err: unknown) => void,
    private readonly toError: (err: unknown) => StoreError,
    private readonly reload: ScriptReload,
  ) {}

  append(pipeline: ChainableCommander): number {
    for (const item of this.items)
      pipeline.evalsha(TOKEN_BUCKET_SHA, 1, item.key, ...tokenBucketArgs(item));
    return this.items.length;
  }

  settle(replies: readonly Reply[]): void {
    const steps = this.items.map(async (item, i): Promise<TokenBucketState> => {
      const reply = replies[i];
      if (reply === undefined) throw SHORT();
      let value = reply[1];
      if (reply[0] !== null) {
        if (!reply[0].message.startsWith('NOSCRIPT')) throw this.toError(reply[0]);
        value = await this.reload(item).catch((err: unknown) => {
          throw this.toError(err);
        });
      }
      const pair = Array.isArray(value) ? value : [];
      return { isAdmitted: asNumber(pair[0]) === 1, tatUs: asNumber(pair[1]) };
    });
    Promise.all(steps).then(this.resolve, this.reject);
  }

  fail(err: unknown): void {
    this.reject(this.toError(err));
  }
}
