// One timer for many waits of one length: each expires once, in order, unless removed first.
import { TimeoutQueue, type Waiting } from '../../../src/server/grpc/timeout-queue';

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
});
