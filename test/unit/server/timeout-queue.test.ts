// One timer for many waits of one length: each expires once, in order, unless removed first.
import {
  EXPIRIES_PER_TURN,
  TimeoutQueue,
  type Waiting,
} from '../../../src/server/grpc/timeout-queue';

interface Entry extends Waiting {
  readonly name: string;
}

const entry = (name: string): Entry => ({ name, dueMs: 0, queuedAt: -1 });

/** A queue of `waitMs` and the names of the entries it expired, in order. */
function queueOf(waitMs: number): { queue: TimeoutQueue<Entry>; expired: string[] } {
  const expired: string[] = [];
  const queue = new TimeoutQueue<Entry>(waitMs, (e) => expired.push(e.name));
  return { queue, expired };
}

describe('TimeoutQueue', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('expires each entry once, when its own wait has passed', () => {
    const { queue, expired } = queueOf(100);
    queue.add(entry('a'));
    jest.advanceTimersByTime(40);
    queue.add(entry('b'));
    jest.advanceTimersByTime(59);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    // The timer was re-armed for b, added 40 ms after a.
    jest.advanceTimersByTime(39);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['a', 'b']);
  });

  it('never expires a removed entry, and still expires the others', () => {
    const { queue, expired } = queueOf(100);
    const a = entry('a');
    queue.add(a);
    const b = entry('b');
    queue.add(b);
    queue.add(entry('c'));
    // The middle one first: its slot stays behind a, until a goes too.
    queue.remove(b);
    queue.remove(a);
    expect(a.queuedAt).toBe(-1);
    queue.remove(a);
    jest.advanceTimersByTime(100);
    expect(expired).toEqual(['c']);
    expect(queue.isEmpty).toBe(true);
  });

  it('arms again after it emptied', () => {
    const { queue, expired } = queueOf(50);
    queue.add(entry('a'));
    jest.advanceTimersByTime(50);
    queue.add(entry('b'));
    jest.advanceTimersByTime(49);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
  });

  it('grows past its first slots behind a waiting head, keeping order and removals', () => {
    const { queue, expired } = queueOf(100);
    // The first entry waits while thousands come and go, as a slow body would hold the head.
    queue.add(entry('slow'));
    const later: Entry[] = [];
    for (let i = 0; i < 5000; i++) {
      const e = entry(`e${i}`);
      queue.add(e);
      if (i % 2 === 0) queue.remove(e);
      else later.push(e);
    }
    // Slots of entries moved by a growth are found again.
    for (const e of later.slice(0, 1000)) queue.remove(e);
    jest.advanceTimersByTime(100);
    // The rest expire a slice a turn.
    for (let turn = 0; turn < 100 && !queue.isEmpty; turn++) jest.advanceTimersToNextTimer();
    expect(expired).toEqual(['slow', ...later.slice(1000).map((e) => e.name)]);
    expect(queue.isEmpty).toBe(true);
    // Emptied, it works on as before.
    queue.add(entry('after'));
    jest.advanceTimersByTime(100);
    expect(expired.at(-1)).toBe('after');
  });

  it('lets an expiring entry queue another, which waits its whole length', () => {
    const expired: string[] = [];
    const queue: TimeoutQueue<Entry> = new TimeoutQueue<Entry>(100, (e) => {
      expired.push(e.name);
      if (e.name === 'a') queue.add(entry('again'));
    });
    queue.add(entry('a'));
    jest.advanceTimersByTime(100);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(99);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'again']);
  });

  it('drops everything on clear(), and takes no wait past the timer ceiling', () => {
    const { queue, expired } = queueOf(100);
    const a = entry('a');
    queue.add(a);
    queue.clear();
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual([]);
    // A stale entry is no one's: removing it changes nothing.
    queue.remove(a);
    queue.add(entry('b'));
    jest.advanceTimersByTime(100);
    expect(expired).toEqual(['b']);
    const never = entry('never');
    expect(queueOf(2 ** 31).queue.add(never)).toBe(false);
    expect(never.queuedAt).toBe(-1);
  });

  it('expires waits falling due together in slices of a turn each, in order, none lost', () => {
    // 150,000 header-only calls expiring in one timer callback once held the event loop for
    // hundreds of ms: each turn now expires EXPIRIES_PER_TURN at most, the rest next turn.
    const { queue, expired } = queueOf(100);
    const total = 10 * EXPIRIES_PER_TURN + 5;
    for (let i = 0; i < total; i++) queue.add(entry(String(i)));
    jest.advanceTimersByTime(100);
    expect(expired.length).toBe(EXPIRIES_PER_TURN);
    let turns = 1;
    while (expired.length < total && turns < 100) {
      const before = expired.length;
      // One turn: the next pending callback alone (the slice's setImmediate).
      jest.advanceTimersToNextTimer();
      turns += 1;
      expect(expired.length - before).toBeLessThanOrEqual(EXPIRIES_PER_TURN);
      expect(expired.length - before).toBeGreaterThan(0);
    }
    expect(turns).toBe(11);
    expect(expired).toEqual(Array.from({ length: total }, (_, i) => String(i)));
    // A wait added while slices ran is not expired before its own time.
    queue.add(entry('late'));
    jest.advanceTimersByTime(99);
    expect(expired.length).toBe(total);
    jest.advanceTimersByTime(1);
    expect(expired.at(-1)).toBe('late');
  });

  it('drops the slices left on clear()', () => {
    const { queue, expired } = queueOf(100);
    for (let i = 0; i < 3 * EXPIRIES_PER_TURN; i++) queue.add(entry(String(i)));
    jest.advanceTimersByTime(100);
    queue.clear();
    jest.runAllTimers();
    expect(expired.length).toBe(EXPIRIES_PER_TURN);
  });
});
