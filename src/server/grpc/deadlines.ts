// The callers' deadlines (grpc-timeout), one queue per length in use instead of a timer per call.
import { MAX_TIMER_MS, TimeoutQueue, type Waiting } from './timeout-queue';

/**
 * Lengths with a queue of their own. Envoy sends one length per filter (20 ms unless
 * configured); clients that send what is left of their own deadline send a few lengths near
 * each other once rounded to the millisecond. Past this many, a call gets a timer of its own.
 */
const MAX_QUEUES = 16;

/** One call's deadline, to pass to Deadlines.disarm(): queued, or on a timer of its own. */
export class Deadline<T> implements Waiting {
  dueMs = 0;
  queuedAt = -1;
  queue: TimeoutQueue<Deadline<T>> | undefined = undefined;
  timer: NodeJS.Timeout | undefined = undefined;

  constructor(readonly target: T) {}
}

/**
 * A timer per call cost more than the decision itself on the memory backend: answered in the
 * same turn, each call made node create and drop the timer list of its length, and arm the
 * native timer again. Calls with the same grpc-timeout (rounded up to the millisecond) fall
 * due in the order they came, so they share one queue and one timer. `onExpire` is told the
 * target of each deadline that passes.
 */
export class Deadlines<T> {
  private readonly queues = new Map<number, TimeoutQueue<Deadline<T>>>();
  private readonly expire: (deadline: Deadline<T>) => void;

  constructor(private readonly onExpire: (target: T) => void) {
    this.expire = (deadline) => {
      onExpire(deadline.target);
    };
  }

  /**
   * Tells onExpire of `target` in `waitMs` unless disarmed first. Undefined for a wait past
   * setTimeout's ceiling: no one waits that long, and such a timer would fire at once.
   */
  arm(waitMs: number, target: T): Deadline<T> | undefined {
    const ms = Math.max(1, Math.ceil(waitMs));
    if (ms >= MAX_TIMER_MS) return undefined;
    const deadline = new Deadline(target);
    const queue = this.queueFor(ms);
    if (queue === undefined) {
      deadline.timer = setTimeout(this.onExpire, ms, target);
      deadline.timer.unref();
    } else {
      queue.add(deadline);
      deadline.queue = queue;
    }
    return deadline;
  }

  disarm(deadline: Deadline<T>): void {
    if (deadline.timer !== undefined) clearTimeout(deadline.timer);
    else deadline.queue?.remove(deadline);
  }

  /** Drops every deadline still queued (the server is closing). */
  clear(): void {
    for (const queue of this.queues.values()) queue.clear();
    this.queues.clear();
  }

  private queueFor(ms: number): TimeoutQueue<Deadline<T>> | undefined {
    const known = this.queues.get(ms);
    if (known !== undefined) return known;
    if (this.queues.size >= MAX_QUEUES) {
      // Room is made only from a length no call is waiting on.
      const idle = [...this.queues].find(([, queue]) => queue.isEmpty);
      if (idle === undefined) return undefined;
      this.queues.delete(idle[0]);
    }
    const queue = new TimeoutQueue<Deadline<T>>(ms, this.expire);
    this.queues.set(ms, queue);
    return queue;
  }
}
