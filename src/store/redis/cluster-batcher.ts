// Batches the commands of one event-loop turn per cluster node and follows redirections.
import calculateSlot from 'cluster-key-slot';
import type { Cluster } from 'ioredis';
import { StoreError } from '../errors';
import { FlushSchedule, InFlight, type Batcher } from './batcher';
import { appendCommand, sendCommand, type CounterClient, type CounterCommand } from './commands';
import type { PipelineOp, Reply } from './ops';

/** Replies that mean "ask again, elsewhere or later": the slot moved or the cluster is changing. */
const REDIRECTION = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /;

/** Ask the cluster for its topology at most this often when errors suggest it changed. */
const REFRESH_INTERVAL_MS = 250;

/** An op waiting for the replies of commands spread over several nodes. */
class PendingOp {
  private readonly replies: Reply[];
  private remaining: number;
  private isDone = false;

  constructor(readonly op: PipelineOp) {
    this.replies = new Array<Reply>(op.commands.length);
    this.remaining = op.commands.length;
    if (this.remaining === 0) this.finish();
  }

  get isSettled(): boolean {
    return this.isDone;
  }

  set(index: number, reply: Reply): void {
    if (this.isDone) return;
    this.replies[index] = reply;
    this.remaining -= 1;
    if (this.remaining === 0) this.finish();
  }

  fail(err: unknown): void {
    if (this.isDone) return;
    this.isDone = true;
    this.op.fail(err);
  }

  private finish(): void {
    this.isDone = true;
    this.op.settle(this.replies);
  }
}

/** One command of a pending op, as routed to a node. */
interface Routed {
  readonly pending: PendingOp;
  readonly index: number;
  readonly command: CounterCommand;
}

/**
 * Each key's commands go to its slot owner: the commands of one flush are grouped by the node
 * set that serves their slot and each group is one pipeline, all written at once. A command
 * answered with MOVED, ASK, TRYAGAIN or CLUSTERDOWN is sent again on its own through the
 * cluster client, whose redirection handling follows it (ASKING included) and refreshes the
 * slot table; a command that already ran is never sent twice. Every op of a flush is answered
 * within timeoutMs, whatever the redirections and retries in between.
 */
export class ClusterBatcher implements Batcher {
  private queue: PipelineOp[] = [];
  private readonly schedule: FlushSchedule;
  private readonly inFlight = new InFlight();
  private lastRefreshMs = 0;

  constructor(
    private readonly cluster: CounterClient & Cluster,
    windowMs: number,
    private readonly timeoutMs: number,
  ) {
    this.schedule = new FlushSchedule(windowMs, () => {
      this.flush();
    });
  }

  submit(op: PipelineOp): void {
    this.queue.push(op);
    this.schedule.request();
  }

  drain(): Promise<void> {
    return this.inFlight.drain(this.schedule.isPending);
  }

  private flush(): void {
    const ops = this.queue;
    this.queue = [];
    if (ops.length === 0) return;
    if (this.cluster.status !== 'ready') {
      // Pipelines would wait for the cluster to come back; requests get their error now instead.
      const err = new StoreError('redis', 'the cluster is not connected', true);
      for (const op of ops) op.fail(err);
      return;
    }
    const pendings = ops.map((op) => new PendingOp(op));
    const groups = this.group(pendings);
    this.inFlight.start();
    const deadline = setTimeout(() => {
      const err = new StoreError('redis', 'Command timed out', true);
      for (const pending of pendings) pending.fail(err);
    }, this.timeoutMs);
    void Promise.all([...groups.values()].map((routed) => this.execute(routed))).finally(() => {
      clearTimeout(deadline);
      this.inFlight.finish(this.schedule.isPending);
    });
  }

  /** Commands by the node set that serves their slot, as the cluster client sees it now. */
  private group(pendings: readonly PendingOp[]): Map<string, Routed[]> {
    const groups = new Map<string, Routed[]>();
    const slots = this.cluster.slots;
    for (const pending of pendings) {
      pending.op.commands.forEach((command, index) => {
        // An unknown slot goes in a group of its own: the client picks a node and follows MOVED.
        const nodes = slots[calculateSlot(command.key)];
        const id = nodes === undefined ? '' : nodes.join(';');
        let group = groups.get(id);
        if (group === undefined) {
          group = [];
          groups.set(id, group);
        }
        group.push({ pending, index, command });
      });
    }
    return groups;
  }

  private async execute(routed: readonly Routed[]): Promise<void> {
    const pipeline = this.cluster.pipeline();
    for (const r of routed) appendCommand(pipeline, r.command);
    let results: [Error | null, unknown][] | null;
    try {
      results = await pipeline.exec();
    } catch (err: unknown) {
      this.topologyMayHaveChanged();
      for (const r of routed) r.pending.fail(err);
      return;
    }
    const resends: Promise<void>[] = [];
    routed.forEach((r, i) => {
      const reply = results?.[i] ?? [
        new Error('the pipeline returned fewer replies than commands'),
        null,
      ];
      const err = reply[0];
      if (err !== null && REDIRECTION.test(err.message) && !r.pending.isSettled) {
        this.topologyMayHaveChanged();
        resends.push(this.resend(r));
      } else {
        // Not a reply from a node: a connection failed, perhaps a node is gone.
        if (err !== null && err.name !== 'ReplyError') this.topologyMayHaveChanged();
        r.pending.set(r.index, reply);
      }
    });
    await Promise.all(resends);
  }

  private async resend(r: Routed): Promise<void> {
    try {
      r.pending.set(r.index, [null, await sendCommand(this.cluster, r.command)]);
    } catch (err: unknown) {
      r.pending.set(r.index, [err instanceof Error ? err : new Error(String(err)), null]);
    }
  }

  /** A node failed or a slot moved: fetch the slot table again, at most every 250 ms. */
  private topologyMayHaveChanged(): void {
    const now = performance.now();
    if (this.lastRefreshMs > 0 && now - this.lastRefreshMs < REFRESH_INTERVAL_MS) return;
    this.lastRefreshMs = now;
    this.cluster.refreshSlotsCache();
  }
}
