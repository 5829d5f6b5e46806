// The store registry: BACKEND_TYPE picks the opener, every backend type has one.
import { ManualClock } from '../../../src/lib/clock';
import { silentLogger } from '../../../src/lib/logger';
import { loadSettings, type BackendSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import {
  createStore,
  MemcachedCounterStore,
  MemoryCounterStore,
  STORE_OPENERS,
  type StoreDeps,
} from '../../../src/store';

function deps(reportHealth: (isConnected: boolean) => void = () => undefined): StoreDeps {
  return { clock: new ManualClock(0), logger: silentLogger, stats: new StatsStore(), reportHealth };
}

describe('createStore', () => {
  it('opens the memory store for BACKEND_TYPE=memory, on the injected clock', async () => {
    const clock = new ManualClock(1_000_000);
    const store = await createStore(loadSettings({ BACKEND_TYPE: 'memory' }).backend, {
      ...deps(),
      clock,
    });
    try {
      expect(store).toBeInstanceOf(MemoryCounterStore);
      expect(store.backend).toBe('memory');
      const hit = { key: 'k', hits: 1, ttlSeconds: 1, isPerSecond: true, isNegative: false };
      expect(await store.increment([hit])).toEqual([1]);
      clock.advance(1_000);
      expect(await store.increment([hit])).toEqual([1]);
    } finally {
      await store.close();
    }
  });

  it('has an opener for every backend type the settings know', () => {
    const types: Record<BackendSettings['type'], true> = {
      memory: true,
      redis: true,
      memcache: true,
    };
    expect(Object.keys(STORE_OPENERS).sort()).toEqual(Object.keys(types).sort());
  });

  it('opens the memcached store for BACKEND_TYPE=memcache, connecting on first use', async () => {
    const store = await createStore(
      loadSettings({ BACKEND_TYPE: 'memcache', MEMCACHE_HOST_PORT: '127.0.0.1:1' }).backend,
      deps(),
    );
    try {
      expect(store).toBeInstanceOf(MemcachedCounterStore);
      expect(store.backend).toBe('memcache');
    } finally {
      await store.close();
    }
  });
});
