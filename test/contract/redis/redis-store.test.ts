// Redis-only behaviour of the counter store: pipeline windows, timeouts, read-only replicas.
import { silentLogger } from '../../../src/lib/logger';
import { RedisCounterStore, StoreError } from '../../../src/store';
import { eventually } from '../../helpers/eventually';
import { RedisServer } from '../../helpers/redis-server';
import { inc, rejection } from '../../helpers/store-calls';
import { redisFixture, redisSettings } from '../../helpers/stores';

let redis: RedisServer;
const run = `${process.pid}_${Date.now()}`;

beforeAll(async () => {
  redis = await RedisServer.start();
});

afterAll(async () => {
  await redis.destroy();
});

it('batches concurrent requests within REDIS_PIPELINE_WINDOW and answers each correctly', async () => {
  const f = await redisFixture(redis, { REDIS_PIPELINE_WINDOW: '5ms' });
  try {
    const key = `window_${run}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, () => Promise.resolve(f.store.increment([inc(key)]))),
    );
    expect(results.map((r) => r[0]).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    expect(await f.rawValue(key)).toBe(50);
  } finally {
    await f.close();
  }
});

it('fails a command that takes longer than REDIS_TIMEOUT with a transient StoreError', async () => {
  const f = await redisFixture(redis, { REDIS_TIMEOUT: '200ms' });
  const blocker = redis.client();
  try {
    // Holds every write for a second; the store gives up after 200 ms.
    expect(await blocker.call('CLIENT', 'PAUSE', '1000', 'WRITE')).toBe('OK');
    const err = await rejection(f.store.increment([inc(`slow_${run}`)]));
    expect(err.isTransient).toBe(true);
    expect(err.message).toMatch(/^redis backend: no answer from 127\.0\.0\.1:\d+ within 200 ms$/);
    await blocker.call('CLIENT', 'UNPAUSE');
  } finally {
    blocker.disconnect();
    await f.close();
  }
});

it('answers an error reply to its own request only; the rest of the batch counts', async () => {
  const f = await redisFixture(redis);
  const admin = redis.client();
  try {
    const list = `list_${run}`;
    await admin.rpush(list, 'x');
    const [before, wrong, after] = await Promise.allSettled([
      f.store.increment([inc(`ok1_${run}`)]),
      f.store.increment([inc(`ok2_${run}`), inc(list)]),
      f.store.increment([inc(`ok3_${run}`, 3)]),
    ]);
    expect(before).toEqual({ status: 'fulfilled', value: [1] });
    expect(after).toEqual({ status: 'fulfilled', value: [3] });
    if (wrong.status !== 'rejected') throw new Error('the request with the list key was answered');
    const err: unknown = wrong.reason;
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).message).toMatch(/^redis backend: WRONGTYPE /);
    expect((err as StoreError).isTransient).toBe(false);
    // The good key of the failed request was counted and given its expiry, as a pipeline does.
    expect(await f.rawValue(`ok2_${run}`)).toBe(1);
    expect(await admin.ttl(`ok2_${run}`)).toBeGreaterThan(0);
  } finally {
    admin.disconnect();
    await f.close();
  }
});

it('after a timeout, the late replies do not answer later requests', async () => {
  const f = await redisFixture(redis, { REDIS_TIMEOUT: '200ms' });
  const blocker = redis.client();
  try {
    expect(await blocker.call('CLIENT', 'PAUSE', '500', 'WRITE')).toBe('OK');
    const slow = rejection(f.store.increment([inc(`late_${run}`, 5), inc(`late2_${run}`, 7)]));
    expect((await slow).message).toMatch(
      /^redis backend: no answer from 127\.0\.0\.1:\d+ within 200 ms$/,
    );
    // The paused batch runs when the pause ends; its replies reach a command long answered.
    await eventually(async () => (await f.rawValue(`late2_${run}`)) === 7, {
      what: 'the paused batch to run',
    });
    expect(await f.store.increment([inc(`late_${run}`, 1), inc(`late2_${run}`, 1)])).toEqual([
      6, 8,
    ]);
    expect(await f.rawValue(`late_${run}`)).toBe(6);
  } finally {
    blocker.disconnect();
    await f.close();
  }
});

describe('a read-only replica', () => {
  let replica: RedisServer;

  beforeAll(async () => {
    replica = await RedisServer.start();
    const c = replica.client();
    try {
      await c.call('REPLICAOF', '127.0.0.1', String(redis.port));
    } finally {
      c.disconnect();
    }
  });

  afterAll(async () => {
    await replica.destroy();
  });

  async function connectionsReceived(): Promise<number> {
    const c = replica.client();
    try {
      const info = await c.info('stats');
      return Number(/total_connections_received:(\d+)/.exec(info)?.[1] ?? 0);
    } finally {
      c.disconnect();
    }
  }

  it('returns the READONLY error; with REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR the connection is replaced', async () => {
    const store = await RedisCounterStore.open(
      redisSettings({
        REDIS_URL: `127.0.0.1:${replica.port}`,
        REDIS_CLOSE_CONNECTION_ON_READONLY_ERROR: 'true',
      }),
      silentLogger,
    );
    try {
      const before = await connectionsReceived();
      const err = await rejection(store.increment([inc(`ro_${run}`)]));
      expect(err.message).toMatch(/^redis backend: READONLY /);
      expect(err.isTransient).toBe(true);
      await eventually(async () => (await connectionsReceived()) > before + 1, {
        what: 'a new connection',
      });
    } finally {
      await store.close();
    }
  });

  it('keeps the connection without the setting', async () => {
    const store = await RedisCounterStore.open(
      redisSettings({ REDIS_URL: `127.0.0.1:${replica.port}` }),
      silentLogger,
    );
    try {
      const before = await connectionsReceived();
      const err = await rejection(store.increment([inc(`ro2_${run}`)]));
      expect(err.message).toMatch(/^redis backend: READONLY /);
      expect(await store.read([{ key: 'anything', isPerSecond: false }])).toEqual([0]);
      // Only the probe's own connection is new.
      expect(await connectionsReceived()).toBe(before + 1);
    } finally {
      await store.close();
    }
  });
});

it('authenticates as an ACL user with REDIS_AUTH=user:password', async () => {
  const admin = redis.client();
  try {
    await admin.call(
      'ACL',
      'SETUSER',
      `limiter${process.pid}`,
      'on',
      '>s3cret:pass',
      '~*',
      '+@all',
    );
    const f = await redisFixture(redis, { REDIS_AUTH: `limiter${process.pid}:s3cret:pass` });
    try {
      expect(await f.store.increment([inc(`acl_${run}`, 2)])).toEqual([2]);
      const clients = await admin.call('CLIENT', 'LIST');
      expect(String(clients)).toContain(`user=limiter${process.pid}`);
    } finally {
      await f.close();
    }
  } finally {
    await admin.call('ACL', 'DELUSER', `limiter${process.pid}`);
    admin.disconnect();
  }
});

describe('a counter pushed to the end of int64', () => {
  it('reads as saturated (over any limit) instead of failing every call on the key', async () => {
    const f = await redisFixture(redis);
    const direct = redis.client();
    try {
      const key = `overflow_${run}`;
      await direct.set(key, '9223372036854775000', 'EX', 60);
      const [value] = await f.store.increment([inc(key, 2 ** 53)]);
      expect(value).toBeGreaterThan(2 ** 62);
      // Still an integer in Redis: the next call on the key works as well.
      const [again] = await f.store.increment([inc(key, 1)]);
      expect(again).toBeGreaterThan(2 ** 62);
    } finally {
      direct.disconnect();
      await f.close();
    }
  });

  it('keeps a refunded huge counter an integer, so later increments still work', async () => {
    const f = await redisFixture(redis);
    const direct = redis.client();
    try {
      const key = `refund_${run}`;
      await direct.set(key, '9223372036854775000', 'EX', 60);
      await f.store.increment([{ ...inc(key, 5), isNegative: true }]);
      expect(await direct.get(key)).toBe('9223372036854774995');
      const [value] = await f.store.increment([inc(key, 1)]);
      expect(value).toBeGreaterThan(2 ** 62);
      expect(await direct.ttl(key)).toBeGreaterThan(0);
    } finally {
      direct.disconnect();
      await f.close();
    }
  });
});
