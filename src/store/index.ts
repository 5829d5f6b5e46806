// Counter backends behind one seam: memory, Redis and memcached, chosen by createStore.
export type { CounterStore, CounterIncrement, CounterRead, BackendName } from './counter-store';
export { StoreError } from './errors';
export { MemoryCounterStore } from './memory/memory-store';
export { RedisCounterStore } from './redis/redis-store';
export { MemcachedCounterStore } from './memcached/memcached-store';
export { createStore, STORE_OPENERS } from './create-store';
export type { StoreDeps } from './store-deps';
export type { RedisStoreOptions } from './redis/redis-store';
export type { AwsIdentity } from './redis/aws-identity';
