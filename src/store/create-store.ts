// The counter store the settings choose, opened by the opener registered for its backend type.
import type { BackendSettings } from '../settings';
import { STAT } from '../stats';
import type { CounterStore } from './counter-store';
import { MEMCACHED_UNSUPPORTED, MemcachedCounterStore } from './memcached/memcached-store';
import { MemoryCounterStore } from './memory/memory-store';
import { openRedisStore } from './redis/open-redis-store';
import { guarded, type StoreDeps } from './store-deps';
import { tracedStore } from './traced-store';

type BackendSettingsOf = {
  readonly [K in BackendSettings['type']]: Extract<BackendSettings, { type: K }>;
};

/** Opens one backend; rejects with a StoreError when the backend cannot be reached. */
type StoreOpeners = {
  readonly [K in keyof BackendSettingsOf]: (
    settings: BackendSettingsOf[K],
    deps: StoreDeps,
  ) => Promise<CounterStore>;
};

/**
 * One line per backend type: adding a backend is a new folder in store/ and a line here
 * (the settings' BackendSettings union makes a missing line a compile error).
 */
export const STORE_OPENERS: StoreOpeners = {
  memory: (settings, deps) => {
    const evictions = deps.stats.counter(STAT.memoryEvictions);
    const store = new MemoryCounterStore({
      clock: deps.clock,
      maxKeys: settings.maxKeys,
      onEvict: () => {
        evictions.inc();
      },
    });
    return Promise.resolve(guarded(store, 'memory', deps));
  },
  redis: openRedisStore,
  memcache: async (settings, deps) =>
    guarded(
      await MemcachedCounterStore.open(settings, { logger: deps.logger, stats: deps.stats }),
      'memcache',
      deps,
    ),
};

/**
 * What each backend cannot count (its store's `unsupported`), for compiling without a store:
 * with WORKERS above 1 the supervisor compiles, and only the workers open the backend.
 */
export const BACKEND_UNSUPPORTED: {
  readonly [K in keyof BackendSettingsOf]: CounterStore['unsupported'];
} = {
  memory: Object.freeze({}),
  redis: Object.freeze({}),
  memcache: MEMCACHED_UNSUPPORTED,
};

/**
 * Opens the store of `settings.type`; resolves once it is ready for requests. Given a tracer,
 * the store (its breakers included) is wrapped so that each round trip is a span.
 */
export async function createStore<K extends keyof BackendSettingsOf>(
  settings: BackendSettingsOf[K] & { readonly type: K },
  deps: StoreDeps,
): Promise<CounterStore> {
  const open: StoreOpeners[K] = STORE_OPENERS[settings.type];
  const store = await open(settings, deps);
  return deps.tracer === undefined ? store : tracedStore(store, deps.tracer);
}
