// Counter backends behind one seam: memory, Redis (and later memcached).
export type { CounterStore, CounterIncrement, CounterRead, BackendName } from './counter-store';
export { StoreError } from './errors';
export { MemoryCounterStore } from './memory/memory-store';
export { RedisCounterStore } from './redis/redis-store';
export type { RedisStoreOptions } from './redis/redis-store';
export type { AwsIdentity } from './redis/aws-identity';
