// Many waits of one length under one timer: entries expire in the order they were added.

/** setTimeout's ceiling (a longer delay fires at once); a longer wait is as good as none. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Slots a queue starts with. */
const INITIAL_SLOTS = 64;
/**
 * A ring larger than this goes back to INITIAL_SLOTS when it empties; a smaller one is kept,
 * so that a queue whose load hovers around a size does not grow and shrink over and over.
 */
const KEPT_SLOTS = 4096;
/**
 * Entries expired in one turn of the event loop at most; the rest wait for the next turn, after
 * the I/O that came meanwhile. Expiring one answers or resets a stream (some tens of µs), so
 * 150,000 waits falling due together once held the loop for seconds; a slice of this many is
 * about what a turn's 64 KiB of frames costs to read (h2/session.ts).
 */
export const EXPIRIES_PER_TURN = 128;

/**
 * What a queue holds: the caller's own object (a call's state), so that queueing allocates
 * nothing. The queue keeps its two fields.
 */
export interface Waiting {
  /** When it falls due, on performance.now(). */
  dueMs: number;
  /** Its slot in the queue, or -1 when not queued. */
  queuedAt: number;
}

/**
 * Every call reads its body within HEADER_TIMEOUT. One timer serves the whole queue, so a call
 * creates and clears no timer of its own (each is an async resource). All waits here have the
 * same length, so the oldest is always due first: entries sit in arrival order in a ring, and
 * one unref'd timer is armed for the oldest, re-armed when it fires.
 *
 * A ring, not a Set: a long-lived Set that gains and loses an entry per call can keep removed
 * entries reachable from its earlier tables into the old generation, and an entry holds its
 * call. A removed entry's slot is emptied at once, so nothing here outlives its call.
 */
export class TimeoutQueue<W extends Waiting> {
  private slots: (W | undefined)[] = new Array<W | undefined>(INITIAL_SLOTS).fill(undefined);
  /** The oldest slot in use. */
  private head = 0;
  /** Slots in use from `head` on, emptied ones behind a waiting entry included. */
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly fireNextSlice = (): void => {
    this.fire();
  };
  /** Set while expiries past a turn's slice wait for the next turn. */
  private nextSlice: NodeJS.Immediate | undefined;

  constructor(
    private readonly waitMs: number,
    private readonly onExpire: (entry: W) => void,
  ) {}

  /** Queues `entry` to expire `waitMs` from now; false when the wait is too long to need it. */
  add(entry: W): boolean {
    entry.queuedAt = -1;
    if (this.waitMs >= MAX_TIMER_MS) return false;
    if (this.count === this.slots.length) this.grow();
    const at = (this.head + this.count) & (this.slots.length - 1);
    entry.dueMs = performance.now() + this.waitMs;
    entry.queuedAt = at;
    this.slots[at] = entry;
    this.count += 1;
    if (this.timer === undefined && this.nextSlice === undefined)
      this.timer = this.arm(this.waitMs);
    return true;
  }

  /** Whether no wait is queued. */
  get isEmpty(): boolean {
    return this.count === 0;
  }

  /** Takes `entry` out; nothing happens when it is not queued here (any more). */
  remove(entry: W): void {
    const at = entry.queuedAt;
    if (at < 0 || this.slots[at] !== entry) return;
    this.slots[at] = undefined;
    entry.queuedAt = -1;
    this.dropEmptyHead();
  }

  /** Drops every entry and the timer (the server is closing). */
  clear(): void {
    this.clearSlots();
    this.count = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
    clearImmediate(this.nextSlice);
    this.nextSlice = undefined;
  }

  private dropEmptyHead(): void {
    const mask = this.slots.length - 1;
    while (this.count > 0 && this.slots[this.head] === undefined) {
      this.head = (this.head + 1) & mask;
      this.count -= 1;
    }
    if (this.count === 0 && this.slots.length > KEPT_SLOTS) this.clearSlots();
  }

  /** Back to a small ring once a burst (or one slow body holding the head) has passed. */
  private clearSlots(): void {
    this.slots = new Array<W | undefined>(INITIAL_SLOTS).fill(undefined);
    this.head = 0;
  }

  /** Twice the slots, the entries moved to the front in the same order. */
  private grow(): void {
    const old = this.slots;
    const mask = old.length - 1;
    const slots = new Array<W | undefined>(old.length * 2).fill(undefined);
    for (let i = 0; i < this.count; i++) {
      const entry = old[(this.head + i) & mask];
      slots[i] = entry;
      if (entry !== undefined) entry.queuedAt = i;
    }
    this.slots = slots;
    this.head = 0;
  }

  private arm(ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.fire();
    }, ms);
    timer.unref();
    return timer;
  }

  /** Expires what is due, EXPIRIES_PER_TURN at most; what is left waits for the next turn. */
  private fire(): void {
    this.timer = undefined;
    this.nextSlice = undefined;
    const now = performance.now();
    let left = EXPIRIES_PER_TURN;
    while (this.count > 0) {
      const entry = this.slots[this.head];
      if (entry === undefined) {
        this.dropEmptyHead();
        continue;
      }
      if (entry.dueMs > now) {
        this.timer = this.arm(entry.dueMs - now);
        return;
      }
      if (left === 0) {
        this.nextSlice = setImmediate(this.fireNextSlice);
        this.nextSlice.unref();
        return;
      }
      left -= 1;
      this.remove(entry);
      this.onExpire(entry);
    }
  }
}
