// The store registry's Redis line on a real redis-server (backends project): pool notice and health.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryLogger } from '../../../src/lib/logger';
import { loadSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import { createStore, RedisCounterStore } from '../../../src/store';
import { eventually } from '../../helpers/eventually';
import { RedisServer } from '../../helpers/redis-server';

describe('createStore with BACKEND_TYPE=redis', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(() => server.destroy());

  it('connects, says REDIS_POOL_SIZE changes nothing, and lets health follow the connection', async () => {
    const logger = new MemoryLogger();
    const health: boolean[] = [];
    const settings = loadSettings({
      REDIS_URL: `127.0.0.1:${server.port}`,
      REDIS_POOL_SIZE: '4',
      REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
    });
    const store = await createStore(settings.backend, {
      clock: new ManualClock(0),
      logger,
      stats: new StatsStore(),
      reportHealth: (isConnected) => health.push(isConnected),
    });
    try {
      expect(store).toBeInstanceOf(RedisCounterStore);
      expect(logger.lines).toContainEqual(
        expect.objectContaining({
          level: 'info',
          message:
            'REDIS_POOL_SIZE has no effect: one pipelined connection per instance serves all requests',
        }),
      );
      expect(health).toEqual([true]);
      await server.stop();
      await eventually(() => health.at(-1) === false, {
        what: 'health to follow the lost connection',
      });
    } finally {
      await store.close();
      await server.restart();
    }
  });

  it('leaves health alone without REDIS_HEALTH_CHECK_ACTIVE_CONNECTION', async () => {
    const health: boolean[] = [];
    const settings = loadSettings({ REDIS_URL: `127.0.0.1:${server.port}` });
    const store = await createStore(settings.backend, {
      clock: new ManualClock(0),
      logger: new MemoryLogger(),
      stats: new StatsStore(),
      reportHealth: (isConnected) => health.push(isConnected),
    });
    await store.close();
    expect(health).toEqual([]);
  });
});
