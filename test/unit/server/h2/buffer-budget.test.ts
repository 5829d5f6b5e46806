// The buffer budget of unfinished requests: a connection's share of bytes and of requests, the
// totals across connections, and what a header block takes past them.
import { BufferBudget, ConnectionBudget } from '../../../../src/server/h2/buffer-budget';

describe('the buffer budget', () => {
  it('gives a connection a thirty-second of each total, and at least one largest request', () => {
    const budget = new BufferBudget(64 * 1024 * 1024, 10_000, 1024 * 1024 + 5);
    expect(budget.connectionBytes).toBe(2 * 1024 * 1024);
    expect(budget.connectionRequests).toBe(312);
    const small = new BufferBudget(4 * 1024 * 1024, 32, 1024 * 1024 + 5);
    expect(small.connectionBytes).toBe(1024 * 1024 + 5);
    expect(small.connectionRequests).toBe(1);
  });

  it('refuses what is past a connection share, taking nothing, and takes it back when given', () => {
    const budget = new BufferBudget(32 * 1000, 64);
    const one = new ConnectionBudget(budget);
    expect(one.take(1000, 1)).toBe(true);
    expect(one.take(1, 0)).toBe(false);
    expect(one.take(0, 1)).toBe(true);
    expect(one.take(0, 1)).toBe(false);
    expect([budget.heldBytes, budget.heldRequests]).toEqual([1000, 2]);
    expect(one.take(-1000, -1)).toBe(true);
    expect(one.take(500, 1)).toBe(true);
    one.giveAll();
    expect([budget.heldBytes, budget.heldRequests]).toEqual([0, 0]);
    // A stream that closes after its connection gives back nothing twice, and takes nothing.
    expect(one.take(-500, -1)).toBe(true);
    expect(one.take(1, 1)).toBe(false);
    expect([budget.heldBytes, budget.heldRequests]).toEqual([0, 0]);
  });

  it('refuses what is past a total, whoever holds the rest', () => {
    const budget = new BufferBudget(32 * 1000, 64);
    const connections = Array.from({ length: 32 }, () => new ConnectionBudget(budget));
    for (const c of connections) expect(c.take(1000, 1)).toBe(true);
    const late = new ConnectionBudget(budget);
    expect(late.take(1, 0)).toBe(false);
    expect(late.take(0, 1)).toBe(true);
    expect(budget.heldRequests).toBe(33);
  });

  it('forces what must be held anyway, saying whether it fitted', () => {
    const budget = new BufferBudget(32 * 1000, 64);
    const one = new ConnectionBudget(budget);
    expect(one.force(900, 1)).toBe(true);
    expect(one.force(900, 0)).toBe(false);
    expect(budget.heldBytes).toBe(1800);
    expect(one.take(-1800, -1)).toBe(true);
    expect(budget.heldBytes).toBe(0);
  });
});
