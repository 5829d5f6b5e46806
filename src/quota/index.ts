// Envoy's Rate Limit Quota Service: rules, fair shares of a global budget, per-stream protocol,
// demand shared between replicas, and the RLQS messages' protobuf form.
export * from './model';
export { fairShares, wholeParts, type Claim } from './allocate';
export {
  ENVOY_MIN_FILL_PER_SECOND,
  MAX_FILL_SECONDS,
  PUSH_THRESHOLD,
  strategyOf,
  isBeyondThreshold,
} from './assignment';
export {
  MAX_ASSIGNMENT_TTL_MS,
  MIN_ASSIGNMENT_TTL_MS,
  MIN_FORGET_MS,
  RESTART_HOLD_MS,
} from './timing';
export type {
  AssignedStrategy,
  BucketAction,
  BucketUsage,
  QuotaStatus,
  UsageReports,
} from './messages';
export { checkReports, InvalidReport, type WireUsageReports } from './validate';
export { Bucket, MIN_DEFAULT_TTL_MS, MIN_MEASURED_INTERVAL_MS, type RemoteClaim } from './bucket';
export { QuotaStream, type IdBytesLedger, type QuotaStreamSink } from './quota-stream';
export {
  admitsFairly,
  capSetting,
  QUOTA_CAPS,
  type CapRefusal,
  type PeerHold,
  type QuotaCap,
} from './caps';
export { QuotaService, type QuotaLimits, type QuotaServiceOptions } from './quota-service';
export { QuotaStats, QUOTA_SCOPE, ruleStatKey } from './quota-stats';
export { MemoryDemandShare, newReplicaId, type QuotaDemandShare } from './demand-share';
export { RedisDemandShare, type RedisDemandOptions } from './redis-demand';
export {
  decodeReports,
  encodeResponse,
  RLQS_PROTO,
  STREAM_RATE_LIMIT_QUOTAS,
  UndecodableReport,
} from './codec';
export {
  quotaView,
  type QuotaView,
  type QuotaRuleView,
  type QuotaBucketView,
  type QuotaEnvoyView,
} from './view';
