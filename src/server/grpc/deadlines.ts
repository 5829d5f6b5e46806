// The callers' deadlines (grpc-timeout), one queue per length in use instead of a timer per call.
import { TimeoutQueue, type QueuedTimeout } from './timeout-queue';

/**
 * Lengths with a queue of their own. Envoy sends one length per filter (20 ms unless
 * configured); clients that send what is left of their own deadline send a few lengths near
 * each other once rounded to the millisecond. Past this many, a call gets a timer of its own.
 */
const MAX_QUEUES = 16;

/** One call's deadline, to pass to Deadlines.disarm(). */
export type Deadline =
  | { readonly queue: TimeoutQueue; readonly entry: QueuedTimeout | undefined }
  | { readonly timer: NodeJS.Timeout };

/**
 * A timer per call cost more than the decision itself on the memory backend: answered in the
 * same turn, each call made node create and drop the timer list of its length, and arm the
 * native timer again. Calls with the same grpc-timeout (rounded up to the millisecond) fall
 * due in the order they came, so they share one queue and one timer.
 */
export class Deadlines {
  private readonly queues = new Map<number, TimeoutQueue>();

  /** Runs `expire` in `waitMs` unless disarmed first. */
  arm(waitMs: number, expire: () => void): Deadline {
    const ms = Math.max(1, Math.ceil(waitMs));
    const queue = this.queueFor(ms);
    if (queue === undefined) {
      const timer = setTimeout(expire, ms);
      timer.unref();
      return { timer };
    }
    return { queue, entry: queue.add(expire) };
  }

  disarm(deadline: Deadline): void {
    if ('timer' in deadline) clearTimeout(deadline.timer);
    else deadline.queue.remove(deadline.entry);
  }

  /** Drops every deadline still queued (the server is closing). */
  clear(): void {
    for (const queue of this.queues.values()) queue.clear();
    this.queues.clear();
  }

  private queueFor(ms: number): TimeoutQueue | undefined {
    const known = this.queues.get(ms);
    if (known !== undefined) return known;
    if (this.queues.size >= MAX_QUEUES) {
      // Room is made only from a length no call is waiting on.
      const idle = [...this.queues].find(([, queue]) => queue.isEmpty);
      if (idle === undefined) return undefined;
      this.queues.delete(idle[0]);
    }
    const queue = new TimeoutQueue(ms);
    this.queues.set(ms, queue);
    return queue;
  }
}
