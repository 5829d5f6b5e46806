// Counter backends behind one seam: memory, Redis and memcached, chosen by createStore.
export type {
  CounterStore,
  CounterIncrement,
  CounterRead,
  BackendName,
  SlidingWindowChange,
  SlidingWindowCounts,
  TokenBucketChange,
  TokenBucketState,
} from './counter-store';
export { StoreError } from './errors';
export { MemoryCounterStore } from './memory/memory-store';
export { RedisCounterStore } from './redis/redis-store';
export { MemcachedCounterStore } from './memcached/memcached-store';
export { BACKEND_UNSUPPORTED, createStore, STORE_OPENERS } from './create-store';
export type { StoreDeps } from './store-deps';
export { breakerGuard, BreakerStore, type InstanceGuard } from './breaker/breaker-store';
export type { BreakerState } from './breaker/circuit-breaker';
export type { RedisStoreOptions } from './redis/redis-store';
export type { AwsIdentity } from './redis/aws-identity';
export {
  connectWithBackoff,
  createInstanceClient,
  describeInstance,
  setReconnecting,
} from './redis/connection';
