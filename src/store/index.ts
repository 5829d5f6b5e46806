// Counter backends behind one seam: memory, Redis and memcached.
export type { CounterStore, CounterIncrement, CounterRead, BackendName } from './counter-store';
export { StoreError } from './errors';
export { MemoryCounterStore } from './memory/memory-store';
export { RedisCounterStore } from './redis/redis-store';
export { MemcachedCounterStore } from './memcached/memcached-store';
