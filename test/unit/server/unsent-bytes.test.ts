// What waits for clients that do not read: past its own bound a connection is written nothing
// the server starts until it drains, and is cut once GRPC_UNSENT_TIMEOUT passes without a
// drain; past the total, the connection holding most beyond its share is cut first, and those
// within their share only wait.
import type { H2Connection } from '../../../src/server/h2';
import { MemoryLogger } from '../../../src/lib/logger';
import { StatsStore } from '../../../src/stats';
import { Refusals } from '../../../src/server/refusals';
import { UnsentBytes } from '../../../src/server/grpc/unsent-bytes';

const KIB = 1024;
const MIB = 1024 * KIB;

/** A connection whose unsent bytes the test sets, that records being cut. */
class FakeConnection {
  unsentBytes = 0;
  destroyed = false;
  cutCode: number | undefined = undefined;
  private drained: (() => void)[] = [];

  onceDrained(listener: () => void): void {
    this.drained.push(listener);
  }

  cut(code: number): void {
    this.cutCode = code;
    this.destroyed = true;
    this.drain();
  }

  /** The client read everything. */
  drain(): void {
    this.unsentBytes = 0;
    for (const listener of this.drained.splice(0)) listener();
  }

  get as(): H2Connection {
    return this as unknown as H2Connection;
  }
}

function setup(limits: { perConnection: number; total: number; timeoutMs: number }): {
  unsent: UnsentBytes;
  stats: StatsStore;
  logger: MemoryLogger;
} {
  const stats = new StatsStore();
  const logger = new MemoryLogger();
  const unsent = new UnsentBytes(
    {
      maxUnsentBytesPerConnection: limits.perConnection,
      maxUnsentBytes: limits.total,
      unsentTimeoutMs: limits.timeoutMs,
    },
    new Refusals(stats, logger),
  );
  return { unsent, stats, logger };
}

describe('UnsentBytes', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('lets a connection that reads be written to, and follows none of it', () => {
    const { unsent } = setup({ perConnection: MIB, total: 64 * MIB, timeoutMs: 1000 });
    const connection = new FakeConnection();
    connection.unsentBytes = 10 * KIB;
    expect(unsent.mayWrite(connection.as, () => undefined)).toBe(true);
    unsent.wrote(connection.as);
    expect(unsent.totalBytes).toBe(0);
  });

  it('holds writes past the bound until the drain, then retries them, and cuts nothing that drains in time', () => {
    const { unsent, stats } = setup({ perConnection: MIB, total: 64 * MIB, timeoutMs: 1000 });
    const connection = new FakeConnection();
    const retried: string[] = [];
    connection.unsentBytes = 2 * MIB;
    unsent.wrote(connection.as);
    expect(unsent.totalBytes).toBe(2 * MIB);
    expect(unsent.mayWrite(connection.as, () => retried.push('a'))).toBe(false);
    expect(unsent.mayWrite(connection.as, () => retried.push('b'))).toBe(false);
    jest.advanceTimersByTime(999);
    connection.drain();
    expect(retried).toEqual(['a', 'b']);
    expect(unsent.totalBytes).toBe(0);
    jest.advanceTimersByTime(5000);
    expect(connection.cutCode).toBeUndefined();
    expect(unsent.mayWrite(connection.as, () => undefined)).toBe(true);
    expect(stats.counter('ratelimit.server.refused.slow_reader').value).toBe(0);
  });

  it('cuts a connection past its bound once GRPC_UNSENT_TIMEOUT passes without a drain, counted and logged once', () => {
    const { unsent, stats, logger } = setup({
      perConnection: MIB,
      total: 64 * MIB,
      timeoutMs: 1000,
    });
    const connections = [new FakeConnection(), new FakeConnection()];
    for (const connection of connections) {
      connection.unsentBytes = 2 * MIB;
      expect(unsent.mayWrite(connection.as, () => undefined)).toBe(false);
    }
    jest.advanceTimersByTime(999);
    expect(connections.map((c) => c.cutCode)).toEqual([undefined, undefined]);
    jest.advanceTimersByTime(1);
    // ENHANCE_YOUR_CALM, as node:http2 (nghttp2) cuts a client that reads nothing it is sent.
    expect(connections.map((c) => c.cutCode)).toEqual([0xb, 0xb]);
    expect(stats.counter('ratelimit.server.refused.slow_reader').value).toBe(2);
    expect(logger.lines.filter((l) => l.message.includes('GRPC_UNSENT_TIMEOUT'))).toHaveLength(1);
    expect(unsent.totalBytes).toBe(0);
  });

  it('past the total, cuts the connection holding most beyond its 1/32 share first; those within it wait', () => {
    // A share is 1 MiB of 32 MiB.
    const { unsent, stats } = setup({
      perConnection: 24 * MIB,
      total: 32 * MIB,
      timeoutMs: 60_000,
    });
    const small = Array.from({ length: 10 }, () => new FakeConnection());
    for (const connection of small) {
      connection.unsentBytes = 512 * KIB;
      unsent.wrote(connection.as);
    }
    const large = new FakeConnection();
    const larger = new FakeConnection();
    large.unsentBytes = 8 * MIB;
    unsent.wrote(large.as);
    larger.unsentBytes = 20 * MIB;
    unsent.wrote(larger.as);
    // 5 + 8 + 20 MiB: past 32, and the larger is cut, which brings it back within.
    expect(larger.cutCode).toBe(0xb);
    expect(large.cutCode).toBeUndefined();
    expect(small.every((c) => c.cutCode === undefined)).toBe(true);
    expect(unsent.totalBytes).toBe(13 * MIB);
    expect(stats.counter('ratelimit.server.refused.unsent_share').value).toBe(1);
    // At the total, a connection with bytes waiting is written nothing more, none is cut, and
    // a drain makes room again.
    const full = new FakeConnection();
    full.unsentBytes = 19 * MIB;
    unsent.wrote(full.as);
    expect(unsent.totalBytes).toBe(32 * MIB);
    expect([large, full, ...small].every((c) => c.cutCode === undefined)).toBe(true);
    const [first, second] = small as [FakeConnection, FakeConnection];
    expect(unsent.mayWrite(second.as, () => undefined)).toBe(false);
    first.drain();
    expect(unsent.mayWrite(second.as, () => undefined)).toBe(true);
  });
});
