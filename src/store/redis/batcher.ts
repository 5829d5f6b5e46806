// Collects the Redis commands of concurrent requests and writes them as one pipeline.
import type { ChainableCommander, Redis } from 'ioredis';

/** One request's part of a pipeline: how many replies it owns and what to do with them. */
export interface PipelineOp {
  /** Appends this op's commands; returns how many replies they produce. */
  append(pipeline: ChainableCommander): number;
  /** Receives this op's replies, in order. */
  settle(replies: readonly [Error | null, unknown][]): void;
  /** The whole pipeline failed. */
  fail(err: unknown): void;
}

/** One op's replies; an op that throws on them fails alone, and the others still settle. */
function settleOne(op: PipelineOp | undefined, replies: readonly [Error | null, unknown][]): void {
  try {
    op?.settle(replies);
  } catch (err: unknown) {
    op?.fail(err);
  }
}

/**
 * With a window of 0 the queue is written once per event-loop turn (no added wait); with a
 * window above 0 it is written at most that often, trading latency for fewer writes.
 */
export class PipelineBatcher {
  private queue: PipelineOp[] = [];
  private isScheduled = false;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly client: Redis,
    private readonly windowMs: number,
  ) {}

  submit(op: PipelineOp): void {
    this.queue.push(op);
    if (this.isScheduled) return;
    this.isScheduled = true;
    if (this.windowMs > 0) setTimeout(this.flush, this.windowMs);
    else setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.isScheduled = false;
    const ops = this.queue;
    this.queue = [];
    if (ops.length === 0) return;
    const pipeline = this.client.pipeline();
    const counts = ops.map((op) => op.append(pipeline));
    this.inFlight += 1;
    pipeline
      .exec()
      .then(
        (results) => {
          const replies = results ?? [];
          let at = 0;
          for (let i = 0; i < ops.length; i++) {
            const count = counts[i] ?? 0;
            settleOne(ops[i], replies.slice(at, at + count));
            at += count;
          }
        },
        (err: unknown) => {
          for (const op of ops) op.fail(err);
        },
      )
      .finally(() => {
        this.inFlight -= 1;
        if (this.inFlight === 0 && !this.isScheduled) {
          for (const wake of this.idleWaiters.splice(0)) wake();
        }
      });
  };

  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (this.inFlight === 0 && !this.isScheduled) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
