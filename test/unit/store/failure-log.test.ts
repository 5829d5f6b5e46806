// Backend failures in a few log lines: away, a summary per interval at most, back; and the words.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryLogger } from '../../../src/lib/logger';
import { connectionFailure } from '../../../src/store/connection-words';
import { StoreError } from '../../../src/store/errors';
import { FailureLog } from '../../../src/store/failure-log';
import { describeFailure, IOREDIS_REJECTIONS } from '../../../src/store/redis/failures';

const ADDRESS = '10.0.0.7:6379';
const unreachable = (reason: string): StoreError =>
  new StoreError('redis', reason, true, { unreachable: ADDRESS });

function setUp(): { log: FailureLog; logger: MemoryLogger; clock: ManualClock } {
  const logger = new MemoryLogger();
  const clock = new ManualClock(1_000_000);
  return { log: new FailureLog('redis', logger, clock, 10_000), logger, clock };
}

describe('FailureLog', () => {
  it('logs an outage in three lines whatever the number of failed requests', () => {
    const { log, logger, clock } = setUp();
    log.down(ADDRESS, 'connection closed');
    log.down(ADDRESS, 'connection refused');
    for (let i = 0; i < 500; i++) {
      log.requestFailed(unreachable('connection refused'));
      clock.advance(25);
    }
    log.up(ADDRESS);
    log.up(ADDRESS);
    expect(logger.lines.map((l) => [l.level, l.message])).toEqual([
      ['error', 'redis backend unreachable (10.0.0.7:6379): connection closed'],
      [
        'warning',
        'redis backend still unreachable (10.0.0.7:6379) after 10.0 s: connection refused; 401 requests failed so far',
      ],
      [
        'warning',
        'redis backend reachable again (10.0.0.7:6379) after 12.5 s; 500 requests failed meanwhile',
      ],
    ]);
    expect(logger.lines[2]?.fields).toEqual({
      backend: 'redis',
      address: ADDRESS,
      outageMs: 12_500,
      failedRequests: 500,
    });
  });

  it('starts an outage from a failed request when no connection event came first', () => {
    const { log, logger } = setUp();
    log.requestFailed(unreachable('not connected'));
    expect(log.isDown(ADDRESS)).toBe(true);
    expect(log.causeOf(ADDRESS)).toBe('not connected');
    expect(logger.lines.map((l) => l.message)).toEqual([
      'redis backend unreachable (10.0.0.7:6379): not connected',
    ]);
  });

  it('keeps each address apart', () => {
    const { log, logger } = setUp();
    log.down('a:1', 'connection refused');
    log.down('b:2', 'connection reset');
    log.up('a:1');
    expect([log.isDown('a:1'), log.isDown('b:2')]).toEqual([false, true]);
    expect(logger.lines).toHaveLength(3);
  });

  it('logs other failures once, then sums them up at most once per interval', () => {
    const { log, logger, clock } = setUp();
    const wrongType = new StoreError('redis', 'WRONGTYPE Operation against a key', false);
    for (let i = 0; i < 30; i++) {
      log.requestFailed(wrongType);
      clock.advance(500);
    }
    expect(logger.lines.map((l) => l.message)).toEqual([
      'redis backend: WRONGTYPE Operation against a key',
      'redis backend: 20 requests failed in the last 10.0 s; the latest: WRONGTYPE Operation against a key',
    ]);
  });
});

describe('the words callers get', () => {
  it.each([
    [
      { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:6379' },
      'connection refused',
    ],
    [{ code: 'ECONNRESET', message: 'read ECONNRESET' }, 'connection reset'],
    [{ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND redis' }, 'host not found'],
    [
      { code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' },
      'TLS: self-signed certificate',
    ],
    [new Error('something else'), 'something else'],
  ])('say why a connection failed: %j', (err, words) => {
    expect(connectionFailure(err)).toBe(words);
  });

  const context = {
    address: ADDRESS,
    isConnected: false,
    isSingleConnection: true,
    connectionCause: 'connection refused',
    timeoutMs: 500,
  };
  const fromIoredis = (message: string): StoreError =>
    new StoreError('redis', message, true, { cause: new Error(message) });

  it.each(Object.keys(IOREDIS_REJECTIONS))(
    'turn ioredis\'s "%s" into the address and the reason',
    (sentence) => {
      expect(describeFailure(fromIoredis(sentence), context).message).toBe(
        'redis backend unreachable (10.0.0.7:6379): connection refused',
      );
      expect(
        describeFailure(fromIoredis(sentence), { ...context, connectionCause: undefined }).message,
      ).toBe(`redis backend unreachable (10.0.0.7:6379): ${IOREDIS_REJECTIONS[sentence] ?? ''}`);
    },
  );

  it.each(Object.keys(IOREDIS_REJECTIONS))(
    'count "%s" toward the outage while the status still says connected, on one connection',
    (sentence) => {
      // The socket ended before ioredis's close event changed its status (ioredis-behaviour.test.ts).
      const lost = describeFailure(fromIoredis(sentence), { ...context, isConnected: true });
      expect([lost.message, lost.unreachable]).toEqual([
        'redis backend unreachable (10.0.0.7:6379): connection closed',
        ADDRESS,
      ]);
      // A cluster's status is not one node's connection: the sentence alone proves nothing there.
      const cluster = describeFailure(fromIoredis(sentence), {
        ...context,
        isConnected: true,
        isSingleConnection: false,
      });
      expect([cluster.message, cluster.unreachable]).toEqual([
        `redis backend: ${IOREDIS_REJECTIONS[sentence] ?? ''}`,
        undefined,
      ]);
    },
  );

  it('give the closing line every failure of an outage whose first call beat the close event', () => {
    const { log, logger } = setUp();
    const connected = { ...context, isConnected: true };
    const stream = "Stream isn't writeable and enableOfflineQueue options is false";
    log.requestFailed(describeFailure(fromIoredis(stream), connected));
    log.down(ADDRESS, 'connection refused'); // ioredis's close event, a moment later
    for (let i = 0; i < 9; i++) log.requestFailed(describeFailure(fromIoredis(stream), context));
    log.up(ADDRESS);
    expect(logger.lines.map((l) => [l.level, l.message])).toEqual([
      ['error', 'redis backend unreachable (10.0.0.7:6379): connection closed'],
      [
        'warning',
        'redis backend reachable again (10.0.0.7:6379) after 0.0 s; 10 requests failed meanwhile',
      ],
    ]);
  });

  it('name the address and the time waited for a timeout', () => {
    const err = describeFailure(fromIoredis('Command timed out'), {
      ...context,
      isConnected: true,
    });
    expect(err.message).toBe('redis backend: no answer from 10.0.0.7:6379 within 500 ms');
    expect(err.unreachable).toBeUndefined();
  });

  it("keep a server's error reply as Redis wrote it", () => {
    const reply = Object.assign(new Error('WRONGTYPE Operation against a key'), {
      name: 'ReplyError',
    });
    const err = new StoreError('redis', reply.message, false, { cause: reply });
    expect(describeFailure(err, context)).toBe(err);
  });
});
