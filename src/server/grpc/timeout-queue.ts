// Many waits of one length under one timer: entries expire in the order they were added.

/** setTimeout's ceiling; a longer wait is as good as none. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One wait in a queue; `expire` runs once if the entry is still queued when it is due. */
export interface QueuedTimeout {
  readonly dueMs: number;
  readonly expire: () => void;
}

/**
 * Every call reads its body within HEADER_TIMEOUT, and a timer per call (setTimeout and
 * clearTimeout, an async resource each) cost more on the hot path than reading the body.
 * All waits here have the same length, so the oldest is always due first: entries sit in
 * insertion order and one unref'd timer is armed for the oldest, re-armed when it fires.
 * Adding and removing is a Set operation.
 */
export class TimeoutQueue {
  private readonly entries = new Set<QueuedTimeout>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly waitMs: number) {}

  /** Queues `expire` to run `waitMs` from now; returns the entry to pass to remove(). */
  add(expire: () => void): QueuedTimeout | undefined {
    if (this.waitMs >= MAX_TIMER_MS) return undefined;
    const entry: QueuedTimeout = { dueMs: performance.now() + this.waitMs, expire };
    this.entries.add(entry);
    this.timer ??= this.arm(this.waitMs);
    return entry;
  }

  /** Whether no wait is queued. */
  get isEmpty(): boolean {
    return this.entries.size === 0;
  }

  remove(entry: QueuedTimeout | undefined): void {
    if (entry !== undefined) this.entries.delete(entry);
  }

  /** Drops every entry and the timer (the server is closing). */
  clear(): void {
    this.entries.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fire();
    }, ms);
    timer.unref();
    return timer;
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const entry of this.entries) {
      if (entry.dueMs > now) {
        this.timer = this.arm(entry.dueMs - now);
        return;
      }
      this.entries.delete(entry);
      entry.expire();
    }
  }
}
