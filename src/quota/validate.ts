// The rules rlqs.proto states for a usage report, checked on the decoded message; a refusal names
// the field, so the stream can end with INVALID_ARGUMENT saying what to fix.
import type { BucketUsage, UsageReports } from './messages';

/** A Duration as protobufjs decodes it (64-bit seconds as numbers). */
export interface WireDuration {
  readonly seconds?: number;
  readonly nanos?: number;
}

/** A RateLimitQuotaUsageReports message as protobufjs decodes it, absent fields left out. */
export interface WireUsageReports {
  readonly domain?: string;
  readonly bucketQuotaUsages?: readonly {
    readonly bucketId?: { readonly bucket?: Readonly<Record<string, string>> };
    readonly timeElapsed?: WireDuration;
    readonly numRequestsAllowed?: number;
    readonly numRequestsDenied?: number;
  }[];
}

/** Why a report is refused: the field's path in the message and what is wrong with it. */
export class InvalidReport extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'InvalidReport';
  }
}

/** Milliseconds of a Duration; NaN when it is not one. */
export function durationMs(duration: WireDuration): number {
  return (duration.seconds ?? 0) * 1000 + (duration.nanos ?? 0) / 1e6;
}

type WireUsage = NonNullable<WireUsageReports['bucketQuotaUsages']>[number];

/** The path of usage `index`'s field, built only for a refusal. */
const at = (index: number, field: string): string => `bucket_quota_usages[${index}].${field}`;

/**
 * Frozen bucket ids (a stream's decoder hands out the same object for the same bytes) and their
 * pairs, checked: an Envoy's reports name the same buckets every time.
 */
const checkedPairs = new WeakMap<object, ReadonlyMap<string, string>>();

/** The usage's bucket id as pairs, checked (every report of a busy stream passes here). */
function pairsOf(usage: WireUsage, index: number): ReadonlyMap<string, string> {
  if (usage.bucketId === undefined) throw new InvalidReport(at(index, 'bucket_id'), 'is required');
  const bucket = usage.bucketId.bucket ?? {};
  const known = checkedPairs.get(bucket);
  if (known !== undefined) return known;
  const pairs = new Map<string, string>();
  for (const key of Object.keys(bucket)) {
    const value = bucket[key] as string;
    if (key === '') throw new InvalidReport(at(index, 'bucket_id.bucket'), 'has an empty key');
    if (value === '')
      throw new InvalidReport(at(index, `bucket_id.bucket[${JSON.stringify(key)}]`), 'is empty');
    pairs.set(key, value);
  }
  if (pairs.size === 0)
    throw new InvalidReport(at(index, 'bucket_id.bucket'), 'needs at least one key and value');
  if (Object.isFrozen(bucket)) checkedPairs.set(bucket, pairs);
  return pairs;
}

function usageOf(usage: WireUsage, index: number): BucketUsage {
  const bucket = pairsOf(usage, index);
  if (usage.timeElapsed === undefined)
    throw new InvalidReport(at(index, 'time_elapsed'), 'is required');
  const timeElapsedMs = durationMs(usage.timeElapsed);
  if (!(timeElapsedMs > 0)) throw new InvalidReport(at(index, 'time_elapsed'), 'must be above 0');
  return {
    bucket,
    timeElapsedMs,
    allowed: Math.max(0, usage.numRequestsAllowed ?? 0),
    denied: Math.max(0, usage.numRequestsDenied ?? 0),
  };
}

/**
 * The report, checked: a domain of at least one character (the first message of a stream must
 * carry it; later ones may leave it out, as rlqs.proto allows), at least one usage, each with a
 * bucket id of at least one pair of non-empty key and value and a time_elapsed above 0.
 * Throws InvalidReport naming the first field that breaks a rule.
 */
export function checkReports(message: WireUsageReports, isFirst: boolean): UsageReports {
  const domain = message.domain ?? '';
  if (isFirst && domain === '') throw new InvalidReport('domain', 'must not be empty');
  const usages = message.bucketQuotaUsages ?? [];
  if (usages.length === 0)
    throw new InvalidReport('bucket_quota_usages', 'needs at least one item');
  return {
    domain,
    usages: usages.map(usageOf),
  };
}
