// One timer for many waits of one length: each expires once, in order, unless removed first.
import { TimeoutQueue } from '../../../src/server/grpc/timeout-queue';

describe('TimeoutQueue', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('expires each entry once, when its own wait has passed', () => {
    const queue = new TimeoutQueue(100);
    const expired: string[] = [];
    queue.add(() => expired.push('a'));
    jest.advanceTimersByTime(40);
    queue.add(() => expired.push('b'));
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
    const queue = new TimeoutQueue(100);
    const expired: string[] = [];
    const a = queue.add(() => expired.push('a'));
    queue.add(() => expired.push('b'));
    queue.remove(a);
    jest.advanceTimersByTime(100);
    expect(expired).toEqual(['b']);
  });

  it('arms again after it emptied', () => {
    const queue = new TimeoutQueue(50);
    const expired: string[] = [];
    queue.add(() => expired.push('a'));
    jest.advanceTimersByTime(50);
    queue.add(() => expired.push('b'));
    jest.advanceTimersByTime(49);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
  });

  it('drops everything on clear(), and takes no wait past the timer ceiling', () => {
    const queue = new TimeoutQueue(100);
    const expired: string[] = [];
    queue.add(() => expired.push('a'));
    queue.clear();
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual([]);
    expect(new TimeoutQueue(2 ** 31).add(() => expired.push('never'))).toBeUndefined();
  });
});
