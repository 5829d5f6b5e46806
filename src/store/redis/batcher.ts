// Collects the Redis commands of concurrent requests and writes them as one pipeline.
import type { Redis } from 'ioredis';
import { BatchCommand, encodePlain, isPlain } from './batch-command';
import { appendCommand } from './commands';
import { settleSafely, type PipelineOp, type Reply } from './ops';

/** What the store hands its requests to: one per instance, whatever the instance's mode. */
export interface Batcher {
  submit(op: PipelineOp): void;
  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void>;
}

/** Runs `flush` once per event-loop turn (window 0) or at most every windowMs. */
export class FlushSchedule {
  private isScheduled = false;

  constructor(
    private readonly windowMs: number,
    private readonly flush: () => void,
  ) {}

  get isPending(): boolean {
    return this.isScheduled;
  }

  request(): void {
    if (this.isScheduled) return;
    this.isScheduled = true;
    if (this.windowMs > 0) setTimeout(this.run, this.windowMs);
    else setImmediate(this.run);
  }

  private readonly run = (): void => {
    this.isScheduled = false;
    this.flush();
  };
}

/** Counts batches in flight and wakes drain() callers when none is left. */
export class InFlight {
  private count = 0;
  private idleWaiters: (() => void)[] = [];

  start(): void {
    this.count += 1;
  }

  finish(isMoreQueued: boolean): void {
    this.count -= 1;
    if (this.count === 0 && !isMoreQueued) {
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  drain(isMoreQueued: boolean): Promise<void> {
    if (this.count === 0 && !isMoreQueued) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/**
 * One pipeline per flush on one connection (a single server, or the master a sentinel names).
 * With a window of 0 the queue is written once per event-loop turn (no added wait); with a
 * window above 0 it is written at most that often, trading latency for fewer writes.
 */
export class PipelineBatcher implements Batcher {
  private queue: PipelineOp[] = [];
  private readonly schedule: FlushSchedule;
  private readonly inFlight = new InFlight();

  constructor(
    private readonly client: Redis,
    windowMs: number,
  ) {
    this.schedule = new FlushSchedule(windowMs, () => {
      this.flush();
    });
  }

  submit(op: PipelineOp): void {
    this.queue.push(op);
    this.schedule.request();
  }

  private flush(): void {
    const ops = this.queue;
    this.queue = [];
    if (ops.length === 0) return;
    // INCRBY, EXPIRE and GET go out as one batch command; scripts need ioredis's pipeline.
    const plain: PipelineOp[] = [];
    const scripted: PipelineOp[] = [];
    for (const op of ops) (op.commands.every(isPlain) ? plain : scripted).push(op);
    if (plain.length > 0) this.sendPlain(plain);
    if (scripted.length > 0) this.sendPipeline(scripted);
  }

  /** Hands each op its share of the replies, in order. */
  private readonly settle = (ops: readonly PipelineOp[], replies: readonly Reply[]): void => {
    let at = 0;
    for (const op of ops) {
      const count = op.commands.length;
      settleSafely(op, replies.slice(at, at + count));
      at += count;
    }
  };

  private sendPlain(ops: readonly PipelineOp[]): void {
    let payload = '';
    let count = 0;
    for (const op of ops) {
      for (const command of op.commands) payload += encodePlain(command);
      count += op.commands.length;
    }
    this.inFlight.start();
    new BatchCommand(this.client, payload, count, (outcome) => {
      if (outcome instanceof Error) for (const op of ops) op.fail(outcome);
      else this.settle(ops, outcome);
      this.inFlight.finish(this.schedule.isPending);
    }).send();
  }

  private sendPipeline(ops: readonly PipelineOp[]): void {
    const pipeline = this.client.pipeline();
    for (const op of ops) for (const command of op.commands) appendCommand(pipeline, command);
    this.inFlight.start();
    pipeline
      .exec()
      .then(
        (results) => {
          this.settle(ops, results ?? []);
        },
        (err: unknown) => {
          for (const op of ops) op.fail(err);
        },
      )
      .finally(() => {
        this.inFlight.finish(this.schedule.isPending);
      });
  }

  drain(): Promise<void> {
    return this.inFlight.drain(this.schedule.isPending);
  }
}
