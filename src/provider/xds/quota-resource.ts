// The quota_buckets of an xDS resource (a QuotaRules resource, or the deprecated extension
// field of a RateLimitConfig) read into quota rules through the same reader, checks and
// refusals as a file's quota_buckets list.
import { ConfigError } from '../../config';
import { parseQuotaBuckets, type QuotaRule } from '../../quota/model';

/** google.protobuf.UInt32Value: a wrapper whose value 0 is left off the wire. */
interface WireUInt32 {
  value?: number;
}

/** google.protobuf.Duration, 64-bit seconds read as a number. */
interface WireDuration {
  seconds?: number;
  nanos?: number;
}

/** One QuotaBucketRule as protobufjs decodes it: enums as names (numbers when unknown). */
export interface WireQuotaBucket {
  bucket?: Record<string, string>;
  requestsPerUnit?: WireUInt32;
  unit?: string | number;
  strategy?: string | number;
  maxTokens?: WireUInt32;
  assignmentTtl?: WireDuration;
  blanketRule?: string | number;
}

/** A wrapper's number; a wrapper sent without its value holds 0. */
function whole(wrapper: WireUInt32 | undefined): number | undefined {
  return wrapper === undefined ? undefined : (wrapper.value ?? 0);
}

/** An enum as the file's word: its name in lower case; the unset value (`unset`) as absent. */
function word(value: string | number | undefined, unset: string): string | undefined {
  if (value === undefined || value === unset || value === 0) return undefined;
  return typeof value === 'number' ? String(value) : value.toLowerCase();
}

/** A Duration as a Go duration, `30s` or `-1.5s`, which the file's reader parses. */
export function goDuration(duration: WireDuration): string {
  const seconds = duration.seconds ?? 0;
  const nanos = duration.nanos ?? 0;
  const negative = seconds < 0 || nanos < 0;
  const fraction = String(Math.abs(nanos)).padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${Math.abs(seconds)}${fraction === '' ? '' : `.${fraction}`}s`;
}

/**
 * One item as the file writes it: a field left unset is a key left out, so the file's rules
 * about what may stand beside what apply unchanged.
 */
function fileItem(rule: WireQuotaBucket): Record<string, unknown> {
  const item: Record<string, unknown> = {};
  const set = (key: string, value: unknown): void => {
    if (value !== undefined) item[key] = value;
  };
  const bucket = rule.bucket ?? {};
  set('bucket', Object.keys(bucket).length === 0 ? undefined : bucket);
  set('requests_per_unit', whole(rule.requestsPerUnit));
  set('unit', word(rule.unit, 'UNKNOWN'));
  set('strategy', word(rule.strategy, 'STRATEGY_UNSPECIFIED'));
  set('max_tokens', whole(rule.maxTokens));
  set(
    'assignment_ttl',
    rule.assignmentTtl === undefined ? undefined : goDuration(rule.assignmentTtl),
  );
  set('blanket_rule', word(rule.blanketRule, 'BLANKET_RULE_UNSPECIFIED'));
  return item;
}

/**
 * The rules of a resource's quota_buckets, or the first refusal, naming the resource (its
 * source) and the item's path (`quota_buckets[1].unit`) as a file's refusal names its line.
 */
export function quotaRulesOf(
  rules: readonly WireQuotaBucket[],
  where: { readonly domain: string; readonly source: string },
): readonly QuotaRule[] | ConfigError {
  const result = parseQuotaBuckets(rules.map(fileItem), where, (path) => ({ path }));
  if (result.ok) return result.rules;
  const [first] = result.problems;
  if (first === undefined) return [];
  return new ConfigError(first.code, where.source, first.reason, first.position);
}
