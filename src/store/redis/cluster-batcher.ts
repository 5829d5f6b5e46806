// Batches the commands of one event-loop turn per cluster node and follows redirections.
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';
import { StoreError } from '../errors';
import { BatchCommand, encodePlain, isPlain } from './batch-command';
import { FlushSchedule, InFlight, type Batcher } from './batcher';
import {
  appendCommand,
  defineCounterScripts,
  sendCommand,
  type CounterClient,
  type CounterCommand,
} from './commands';
import { settleSafely, type PipelineOp, type Reply } from './ops';

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
    settleSafely(this.op, this.replies);
  }
}

/** One command of a pending op, as routed to a node. */
interface Routed {
  readonly pending: PendingOp;
  readonly index: number;
  readonly command: CounterCommand;
}

/** The routed commands as one batch command on a ready node connection. */
function sendAsBatchCommand(
  node: Redis & CounterClient,
  routed: readonly Routed[],
): Promise<readonly Reply[] | Error> {
  let payload = '';
  for (const r of routed) payload += encodePlain(r.command);
  return new Promise((resolve) => {
    new BatchCommand(node, payload, routed.length, resolve).send();
  });
}

/** The routed commands as an ioredis pipeline (scripts, or a node not ready, or no node known). */
async function sendPipeline(
  client: CounterClient,
  routed: readonly Routed[],
): Promise<readonly Reply[] | Error> {
  const pipeline = client.pipeline();
  for (const r of routed) appendCommand(pipeline, r.command);
  try {
    return (await pipeline.exec()) ?? [];
  } catch (err: unknown) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Each key's commands go to its slot owner: the commands of one flush are grouped by the master
 * the slot table names for their slot, and each group is written straight to that node's
 * connection as one batch command, or one pipeline for scripts and nodes not yet ready (a
 * cluster pipeline would route every command again). A command answered
 * with MOVED, ASK, TRYAGAIN or CLUSTERDOWN is sent again on its own through the cluster client,
 * whose redirection handling follows it (ASKING included) and refreshes the slot table; a
 * command that already ran is never sent twice. Every op of a flush is answered within
 * timeoutMs, whatever the redirections and retries in between.
 */
export class ClusterBatcher implements Batcher {
  private queue: PipelineOp[] = [];
  private readonly schedule: FlushSchedule;
  private readonly inFlight = new InFlight();
  private lastRefreshMs = 0;
  /** Node connections the floored-decrement script is defined on. */
  private readonly prepared = new WeakSet();

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
    const sent = [...groups].map(([owner, routed]) => this.execute(owner, routed));
    void Promise.all(sent)
      .catch((err: unknown) => {
        // Thrown where nothing expected it: the flush's requests fail now, not at the deadline.
        for (const pending of pendings) pending.fail(err);
      })
      .finally(() => {
        clearTimeout(deadline);
        this.inFlight.finish(this.schedule.isPending);
      });
  }

  /** Commands by the master that serves their slot, as the cluster client sees it now. */
  private group(pendings: readonly PendingOp[]): Map<string, Routed[]> {
    const groups = new Map<string, Routed[]>();
    const slots = this.cluster.slots;
    let lastKey = '';
    let owner = '';
    for (const pending of pendings) {
      const commands = pending.op.commands;
      for (let index = 0; index < commands.length; index++) {
        const command = commands[index];
        if (command === undefined) continue;
        // INCRBY and EXPIRE of one key follow each other: one slot lookup serves both.
        if (command.key !== lastKey) {
          lastKey = command.key;
          // An unknown slot goes to the cluster client, which picks a node and follows MOVED.
          owner = slots[calculateSlot(command.key)]?.[0] ?? '';
        }
        let group = groups.get(owner);
        if (group === undefined) {
          group = [];
          groups.set(owner, group);
        }
        group.push({ pending, index, command });
      }
    }
    return groups;
  }

  /** The connection to the node `key` names, with the counter scripts defined on it. */
  private node(key: string): (Redis & CounterClient) | undefined {
    if (key === '') return undefined;
    for (const node of this.cluster.nodes('master')) {
      if (`${node.options.host ?? ''}:${String(node.options.port)}` !== key) continue;
      if (!this.prepared.has(node)) {
        defineCounterScripts(node);
        this.prepared.add(node);
      }
      return node as Redis & CounterClient;
    }
    return undefined;
  }

  private async execute(owner: string, routed: readonly Routed[]): Promise<void> {
    const node = this.node(owner);
    // A node still connecting would queue the command offline, where the batch command cannot
    // follow its replies; INCRBY, EXPIRE, GET and EVALSHA on a ready node go out as one.
    const outcome =
      node?.status === 'ready' && routed.every((r) => isPlain(r.command))
        ? await sendAsBatchCommand(node, routed)
        : await sendPipeline(node ?? this.cluster, routed);
    if (outcome instanceof Error) {
      this.topologyMayHaveChanged();
      for (const r of routed) r.pending.fail(outcome);
      return;
    }
    const resends: Promise<void>[] = [];
    routed.forEach((r, i) => {
      const reply = outcome[i] ?? [
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
