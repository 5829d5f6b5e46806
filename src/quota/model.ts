// The quota rule model alone (rules, their YAML form, the most specific match): what the
// configuration compiler needs, without the service, its transports or its Redis client.
export {
  QUOTA_UNITS,
  QUOTA_UNIT_SECONDS,
  QuotaRuleSet,
  isSamePolicy,
  mergeQuotaRules,
  type BucketPairs,
  type DuplicateRule,
  type QuotaKeyMatcher,
  type QuotaPolicy,
  type QuotaRule,
  type QuotaUnit,
} from './rules';
export {
  parseQuotaBuckets,
  QUOTA_LIST_KEY,
  type Locate,
  type QuotaProblem,
  type QuotaProblemCode,
  type QuotaRulesResult,
  type QuotaSourcePosition,
} from './parse-rules';
