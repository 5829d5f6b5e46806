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
    const refused = new Set<string>();
    const budget = new BufferBudget(32 * 1000, 64);
    budget.onRefused = (reason) => refused.add(reason);
    // A hundred peers, each taking what it may: the first half goes first come, the rest in
    // shares that shrink as peers come, until the total is reached.
    for (let i = 0; i < 100; i++) {
      const peer = new ConnectionBudget(budget, `10.0.0.${String(i)}`);
      for (let step = 0; step < 20 && peer.take(100, 0); step++);
    }
    expect(budget.heldBytes).toBeLessThanOrEqual(32 * 1000);
    expect(budget.heldBytes).toBeGreaterThan(31 * 1000);
    expect(refused.has('buffered_bytes_total')).toBe(true);
    // Requests are a count of their own: a late peer still holds one.
    const late = new ConnectionBudget(budget, '10.0.1.1');
    expect(late.take(1, 0)).toBe(false);
    expect(late.take(0, 1)).toBe(true);
    expect(budget.heldRequests).toBe(1);
  });

  it('past half a total, refuses the peer holding more than its share first and admits a newcomer', () => {
    const refused: string[] = [];
    const budget = new BufferBudget(32 * 1000, 320);
    budget.onRefused = (reason, peer) => refused.push(`${reason} ${peer}`);
    // One hostile peer with twenty connections takes what it may: the first half, first come.
    const hostile = Array.from({ length: 20 }, () => new ConnectionBudget(budget, '10.0.0.66'));
    let taken = 0;
    for (const c of hostile) while (c.take(0, 1)) taken += 1;
    expect(taken).toBe(160);
    expect(budget.heldRequests).toBe(160);
    expect(refused.at(-1)).toBe('requests_per_peer 10.0.0.66');
    // A newcomer gets up to its share of that half: 160 / 2 peers = 80 requests (here its
    // connection's own share of 10 first, so eight connections).
    const innocent = Array.from({ length: 8 }, () => new ConnectionBudget(budget, '10.0.0.7'));
    for (const c of innocent) for (let i = 0; i < 10; i++) expect(c.take(0, 1)).toBe(true);
    expect(new ConnectionBudget(budget, '10.0.0.7').take(0, 1)).toBe(false);
    expect(refused.at(-1)).toBe('requests_per_peer 10.0.0.7');
    // A connection's own share is refused with its own reason.
    expect(innocent[0]?.take(0, 1)).toBe(false);
    expect(refused.at(-1)).toBe('requests_per_connection 10.0.0.7');
    // Never past the total, whoever asks.
    const third = new ConnectionBudget(budget, '10.0.0.8');
    for (let i = 0; i < 100; i++) third.take(0, 1);
    expect(budget.heldRequests).toBeLessThanOrEqual(320);
    // All given back, the peers are forgotten and the hostile one may take again.
    for (const c of [...hostile, ...innocent, third]) c.giveAll();
    expect([budget.heldBytes, budget.heldRequests]).toEqual([0, 0]);
    expect(new ConnectionBudget(budget, '10.0.0.66').take(100, 1)).toBe(true);
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
