// The decision engine: from a request and a config snapshot to a decision, via the counter store.
export { RateLimitEngine, type EngineDependencies } from './engine';
export { RequestError, REQUEST_ERROR_CODES, type RequestErrorCode } from './errors';
export { OverLimitCache, reportLocalCache } from './local-cache';
export { classify, nearLimitThreshold } from './decide';
export { windowOf } from './windows';
export { cacheKey } from './cache-key';
export * from './types';
export {
  describeLimit,
  limitsOf,
  type Algorithm,
  type CounterLookup,
  type CounterReading,
  type DescriptorReading,
  type LimitDescription,
  type SlidingReading,
} from './inspect';
export { RecentDecisions, type RecentDecision } from './recent-decisions';
