// The callers' deadlines: one queue per length in use, a timer of its own past MAX_QUEUES
// lengths; each expires once, at its own time, unless disarmed.
import { Deadlines, type Deadline } from '../../../src/server/grpc/deadlines';

/** A deadline arm() must have given (its wait is under setTimeout's ceiling). */
function given<T>(deadline: Deadline<T> | undefined): Deadline<T> {
  if (deadline === undefined) throw new Error('arm() gave no deadline');
  return deadline;
}

describe('Deadlines', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('expires deadlines of several lengths each at its own time, and never a disarmed one', () => {
    const expired: string[] = [];
    const deadlines = new Deadlines<string>((target) => expired.push(target));
    deadlines.arm(20, 'a20');
    const b = given(deadlines.arm(20, 'b20'));
    deadlines.arm(5, 'c5');
    // 0.3 ms of a µs-precise grpc-timeout rounds up to 1 ms.
    deadlines.arm(0.3, 'd0.3');
    deadlines.disarm(b);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['d0.3']);
    jest.advanceTimersByTime(4);
    expect(expired).toEqual(['d0.3', 'c5']);
    jest.advanceTimersByTime(14);
    expect(expired).toEqual(['d0.3', 'c5']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['d0.3', 'c5', 'a20']);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['d0.3', 'c5', 'a20']);
  });

  it('shares one timer among the deadlines of one length', () => {
    const deadlines = new Deadlines<number>(() => undefined);
    const before = jest.getTimerCount();
    for (let i = 0; i < 100; i++) deadlines.arm(20, i);
    expect(jest.getTimerCount() - before).toBe(1);
  });

  it('gives a timer of its own past 16 lengths waited on, and reuses a length no one waits on', () => {
    const expired: number[] = [];
    const deadlines = new Deadlines<number>((target) => expired.push(target));
    const held = Array.from({ length: 16 }, (_, i) => given(deadlines.arm(100 + i, 100 + i)));
    const timers = jest.getTimerCount();
    // Every queue holds a call: a new length gets a timer of its own.
    const own = given(deadlines.arm(50, 50));
    expect(jest.getTimerCount()).toBe(timers + 1);
    deadlines.arm(60, 60);
    jest.advanceTimersByTime(60);
    expect(expired).toEqual([50, 60]);
    deadlines.disarm(own);
    for (const deadline of held.slice(1)) deadlines.disarm(deadline);
    // Now fifteen queues are empty; a new length takes the place of one of them.
    const whole = jest.getTimerCount();
    deadlines.arm(70, 70);
    deadlines.arm(70, 71);
    expect(jest.getTimerCount()).toBe(whole + 1);
    jest.advanceTimersByTime(100);
    expect(expired).toEqual([50, 60, 100, 70, 71]);
  });

  it('takes no deadline past the timer ceiling, on a queue or a timer of its own', () => {
    const expired: number[] = [];
    const deadlines = new Deadlines<number>((target) => expired.push(target));
    // Sixteen lengths in use: the next one would get a timer of its own.
    for (let i = 0; i < 16; i++) deadlines.arm(100 + i, i);
    const timers = jest.getTimerCount();
    expect(deadlines.arm(2 ** 31 - 1, -1)).toBeUndefined();
    expect(deadlines.arm(2 ** 40, -2)).toBeUndefined();
    expect(jest.getTimerCount()).toBe(timers);
    jest.advanceTimersByTime(200);
    expect(expired).toEqual(Array.from({ length: 16 }, (_, i) => i));
  });

  it('drops every waiting deadline on clear', () => {
    const expired: string[] = [];
    const deadlines = new Deadlines<string>((target) => expired.push(target));
    deadlines.arm(20, 'a');
    deadlines.clear();
    jest.advanceTimersByTime(100);
    expect(expired).toEqual([]);
  });
});
