// A usage report as Envoy's rate_limit_quota filter sends it, checked on the decoded message: what
// the filter really sends is accepted (a 0-second or absent time_elapsed, no usages at all), and a
// usage that would hurt is refused alone, with a reason, while the stream goes on.
import type { QuotaCap } from './caps';
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
    /**
     * Set by the stream's decoder for a bucket id past RLQS_MAX_BUCKET_ID_BYTES, which it
     * skipped without decoding it: its length and the bound.
     */
    readonly oversizedBucketId?: { readonly bytes: number; readonly max: number };
  }[];
}

/** Why a report ends its stream: the field's path in the message and what is wrong with it. */
export class InvalidReport extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'InvalidReport';
  }
}

/** One usage left out of a report, the others being taken: its field and why. */
export interface RefusedUsage {
  readonly field: string;
  readonly reason: string;
  /** The bound that refused it, when one did. */
  readonly cap?: QuotaCap;
}

/** A checked report: the usages taken and those refused. */
export interface CheckedReports extends UsageReports {
  readonly refused: readonly RefusedUsage[];
}

/**
 * Requests a usage may count, allowed and denied together: past 2^53 a count is not exact in a
 * double, and no Envoy lets that many through between two reports.
 */
export const MAX_USAGE_REQUESTS = Number.MAX_SAFE_INTEGER;

/** Milliseconds of a Duration; NaN when it is not one. */
export function durationMs(duration: WireDuration): number {
  return (duration.seconds ?? 0) * 1000 + (duration.nanos ?? 0) / 1e6;
}

type WireUsage = NonNullable<WireUsageReports['bucketQuotaUsages']>[number];

/** The path of usage `index`'s field, built only for a refusal. */
const at = (index: number, field: string): string => `bucket_quota_usages[${index}].${field}`;

/** A usage refused: thrown inside this module, caught per usage. */
class Refusal extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
    readonly cap?: QuotaCap,
  ) {
    super(`${field}: ${reason}`);
  }
}

/**
 * Frozen bucket ids (a stream's decoder hands out the same object for the same bytes) and their
 * pairs, checked: an Envoy's reports name the same buckets every time.
 */
const checkedPairs = new WeakMap<object, ReadonlyMap<string, string>>();

/** The usage's bucket id as pairs, checked (every report of a busy stream passes here). */
function pairsOf(usage: WireUsage, index: number): ReadonlyMap<string, string> {
  const oversized = usage.oversizedBucketId;
  if (oversized !== undefined)
    throw new Refusal(
      at(index, 'bucket_id'),
      `is ${oversized.bytes} bytes, past RLQS_MAX_BUCKET_ID_BYTES (${oversized.max})`,
      'max_bucket_id_bytes',
    );
  if (usage.bucketId === undefined) throw new Refusal(at(index, 'bucket_id'), 'is required');
  const bucket = usage.bucketId.bucket ?? {};
  const known = checkedPairs.get(bucket);
  if (known !== undefined) return known;
  const pairs = new Map<string, string>();
  for (const key of Object.keys(bucket)) {
    const value = bucket[key] as string;
    if (key === '') throw new Refusal(at(index, 'bucket_id.bucket'), 'has an empty key');
    if (value === '')
      throw new Refusal(at(index, `bucket_id.bucket[${JSON.stringify(key)}]`), 'is empty');
    pairs.set(key, value);
  }
  if (pairs.size === 0)
    throw new Refusal(at(index, 'bucket_id.bucket'), 'needs at least one key and value');
  if (Object.isFrozen(bucket)) checkedPairs.set(bucket, pairs);
  return pairs;
}

/**
 * The usage, checked. A time_elapsed of 0 or none is Envoy's first report of a new bucket (it
 * counts whole seconds since the bucket was made): a watch without a measurement.
 */
function usageOf(usage: WireUsage, index: number): BucketUsage {
  const bucket = pairsOf(usage, index);
  const timeElapsedMs = usage.timeElapsed === undefined ? 0 : durationMs(usage.timeElapsed);
  if (!(timeElapsedMs >= 0)) throw new Refusal(at(index, 'time_elapsed'), 'must not be negative');
  const allowed = usage.numRequestsAllowed ?? 0;
  const denied = usage.numRequestsDenied ?? 0;
  if (!(allowed >= 0 && denied >= 0 && allowed + denied <= MAX_USAGE_REQUESTS))
    throw new Refusal(
      at(index, 'num_requests_allowed'),
      `with num_requests_denied counts ${String(allowed + denied)} requests, past 2^53`,
    );
  return { bucket, timeElapsedMs, allowed, denied };
}

/**
 * The report, checked. The first message of a stream must name a domain (Envoy's filter config
 * requires one, so only another client leaves it out: that ends the stream); later ones may
 * leave it out, as rlqs.proto allows. No usages is a keep-alive: Envoy sends one on every tick
 * once an abandon left it no bucket. A usage without a usable bucket id, with a negative
 * time_elapsed or with counts past 2^53 is refused alone, named in `refused`.
 */
export function checkReports(message: WireUsageReports, isFirst: boolean): CheckedReports {
  const domain = message.domain ?? '';
  if (isFirst && domain === '') throw new InvalidReport('domain', 'must not be empty');
  const wire = message.bucketQuotaUsages ?? [];
  const usages: BucketUsage[] = [];
  let refused: RefusedUsage[] | undefined;
  for (let i = 0; i < wire.length; i++) {
    try {
      usages.push(usageOf(wire[i] as WireUsage, i));
    } catch (err: unknown) {
      if (!(err instanceof Refusal)) throw err;
      const { field, reason, cap } = err;
      (refused ??= []).push(cap === undefined ? { field, reason } : { field, reason, cap });
    }
  }
  return { domain, usages, refused: refused ?? NONE };
}

const NONE: readonly RefusedUsage[] = Object.freeze([]);
