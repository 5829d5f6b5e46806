// RateLimitQuotaUsageReports decoder for the RLQS streams: a report goes straight from bytes to
// the plain form the quota service checks (WireUsageReports), without protobufjs's message
// objects, their 64-bit Long values and a copy of each, which cost a busy stream more in
// garbage than in the work it asks for. An Envoy reports the same buckets again and again: a
// bucket id whose bytes the stream sent before is the object decoded then. Read as protobuf-go
// reads bytes (protobuf.ts): unknown fields and known ones of another wire type are skipped, a
// singular message written twice is the merge of both, strings must be UTF-8.
import { UndecodableReport, type IdBytesLedger, type WireUsageReports } from '../../quota';
import { MalformedMessage, ProtoReader, WIRE_BYTES, WIRE_VARINT } from './protobuf';

const TAG_DOMAIN = (1 << 3) | WIRE_BYTES;
const TAG_USAGES = (2 << 3) | WIRE_BYTES;
const TAG_BUCKET_ID = (1 << 3) | WIRE_BYTES;
const TAG_TIME_ELAPSED = (2 << 3) | WIRE_BYTES;
const TAG_ALLOWED = (3 << 3) | WIRE_VARINT;
const TAG_DENIED = (4 << 3) | WIRE_VARINT;
const TAG_MAP = (1 << 3) | WIRE_BYTES;
const TAG_KEY = (1 << 3) | WIRE_BYTES;
const TAG_VALUE = (2 << 3) | WIRE_BYTES;
const TAG_SECONDS = (1 << 3) | WIRE_VARINT;
const TAG_NANOS = (2 << 3) | WIRE_VARINT;

const TWO_32 = 2 ** 32;

interface BucketId {
  bucket?: Record<string, string>;
}

interface Usage {
  bucketId?: BucketId;
  timeElapsed?: { seconds?: number; nanos?: number };
  numRequestsAllowed?: number;
  numRequestsDenied?: number;
  oversizedBucketId?: { bytes: number; max: number };
}

/**
 * An int64 varint, negative past 2^63 (two's complement) as Go reads it, from its two 32-bit
 * halves: the varint as one number has lost the low bits of a negative value.
 */
function int64(r: ProtoReader): number {
  const start = r.pos;
  r.varint();
  let low = 0;
  let high = 0;
  for (let i = 0; start + i < r.pos; i++) {
    const bits = (r.buf[start + i] as number) & 0x7f;
    const shift = 7 * i;
    if (shift < 32) {
      low |= bits << shift;
      if (shift > 25) high |= bits >>> (32 - shift);
    } else high |= bits << (shift - 32);
  }
  return (high | 0) * TWO_32 + (low >>> 0);
}

/** An int32 varint: its low 32 bits, signed, as Go's int32(v) (exact past 2^53 too). */
function int32(r: ProtoReader): number {
  const start = r.pos;
  r.varint();
  let low = 0;
  for (let i = 0; i < 5 && start + i < r.pos; i++)
    low |= ((r.buf[start + i] as number) & 0x7f) << (7 * i);
  return low | 0;
}

/** One map<string, string> entry into `bucket`: a missing key or value is ''. */
function mapEntry(r: ProtoReader, bucket: Record<string, string>): void {
  const outer = r.enter();
  let key = '';
  let value = '';
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === TAG_KEY) key = r.string();
    else if (tag === TAG_VALUE) value = r.string();
    else r.skipField(tag);
  }
  r.leave(outer);
  bucket[key] = value;
}

/**
 * What one cached id is charged: its bytes twice (the key, and the strings decoded from them)
 * and the Map entry and objects around them.
 */
export function cachedIdCost(bytes: number): number {
  return 2 * bytes + 128;
}

/**
 * The bucket ids one stream has sent, by their bytes, frozen: the same bytes are the same id.
 * Bounded: an id longer than `maxIdBytes` is never decoded; past `maxEntries` the cache starts
 * again empty; and each entry's bytes are taken from `ledger` (RLQS_MAX_BUCKET_ID_BYTES_TOTAL,
 * shared by all streams), an id it refuses being decoded at each report instead of kept.
 */
export class BucketIdCache {
  private readonly ids = new Map<string, Readonly<BucketId>>();
  private heldBytes = 0;

  constructor(
    private readonly maxEntries: number,
    /** RLQS_MAX_BUCKET_ID_BYTES: a BucketId message longer than this is refused undecoded. */
    readonly maxIdBytes = Number.POSITIVE_INFINITY,
    private readonly ledger?: IdBytesLedger,
  ) {}

  get(bytes: string): Readonly<BucketId> | undefined {
    return this.ids.get(bytes);
  }

  set(bytes: string, id: BucketId): Readonly<BucketId> {
    if (this.ids.size >= this.maxEntries) this.clear();
    if (id.bucket !== undefined) Object.freeze(id.bucket);
    const frozen = Object.freeze(id);
    const cost = cachedIdCost(bytes.length);
    if (this.ledger === undefined || this.ledger.take(cost)) {
      this.ids.set(bytes, frozen);
      this.heldBytes += cost;
    }
    return frozen;
  }

  /** Empties the cache, giving its bytes back (and at the end of its stream). */
  clear(): void {
    this.ids.clear();
    if (this.heldBytes > 0) this.ledger?.give(this.heldBytes);
    this.heldBytes = 0;
  }
}

/** The fields of a BucketId from pos to `end`, merged into `id` (later keys winning). */
function bucketFields(r: ProtoReader, end: number, id: BucketId): BucketId {
  const outer = r.end;
  r.end = end;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === TAG_MAP) {
      // A null prototype: a key named __proto__ is a key like any other.
      id.bucket ??= Object.create(null) as Record<string, string>;
      mapEntry(r, id.bucket);
    } else r.skipField(tag);
  }
  r.end = outer;
  return id;
}

/**
 * A BucketId: the cached one for bytes seen before, or merged into a copy of `earlier`; or, for
 * one longer than the cache's bound, its length, its bytes skipped undecoded.
 */
function bucketIdOf(
  r: ProtoReader,
  earlier: Readonly<BucketId> | undefined,
  ids: BucketIdCache | undefined,
): Readonly<BucketId> | number {
  const end = r.delimited();
  if (ids !== undefined && end - r.pos > ids.maxIdBytes) {
    const bytes = end - r.pos;
    r.pos = end;
    return bytes;
  }
  if (earlier !== undefined) {
    const copy: BucketId =
      earlier.bucket === undefined
        ? {}
        : { bucket: Object.assign(Object.create(null) as Record<string, string>, earlier.bucket) };
    return bucketFields(r, end, copy);
  }
  if (ids === undefined) return bucketFields(r, end, {});
  const bytes = r.buf.toString('latin1', r.pos, end);
  const known = ids.get(bytes);
  if (known !== undefined) {
    r.pos = end;
    return known;
  }
  return ids.set(bytes, bucketFields(r, end, {}));
}

/** A Duration, merged into `duration`. */
function durationInto(r: ProtoReader, duration: { seconds?: number; nanos?: number }): void {
  const outer = r.enter();
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === TAG_SECONDS) duration.seconds = int64(r);
    else if (tag === TAG_NANOS) duration.nanos = int32(r);
    else r.skipField(tag);
  }
  r.leave(outer);
}

/** The usage's bucket id, or the mark of one past the bound (which a later one does not undo). */
function bucketIdInto(r: ProtoReader, usage: Usage, ids: BucketIdCache | undefined): void {
  const id = bucketIdOf(r, usage.bucketId, ids);
  if (typeof id !== 'number') {
    if (usage.oversizedBucketId === undefined) usage.bucketId = id;
    return;
  }
  delete usage.bucketId;
  usage.oversizedBucketId = { bytes: id, max: ids?.maxIdBytes ?? id };
}

function usageOf(r: ProtoReader, ids: BucketIdCache | undefined): Usage {
  const outer = r.enter();
  const usage: Usage = {};
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === TAG_BUCKET_ID) bucketIdInto(r, usage, ids);
    else if (tag === TAG_TIME_ELAPSED) durationInto(r, (usage.timeElapsed ??= {}));
    else if (tag === TAG_ALLOWED) usage.numRequestsAllowed = r.varint();
    else if (tag === TAG_DENIED) usage.numRequestsDenied = r.varint();
    else r.skipField(tag);
  }
  r.leave(outer);
  return usage;
}

/**
 * Decodes one report; throws UndecodableReport for bytes that are not one. With `ids`, bucket
 * ids come from (and go to) the stream's cache, frozen.
 */
export function decodeUsageReports(
  buf: Buffer,
  start: number,
  end: number,
  ids?: BucketIdCache,
): WireUsageReports {
  const r = new ProtoReader(buf, start, end);
  let domain: string | undefined;
  let usages: Usage[] | undefined;
  try {
    while (r.pos < r.end) {
      const tag = r.varint();
      if (tag === TAG_DOMAIN) domain = r.string();
      else if (tag === TAG_USAGES) (usages ??= []).push(usageOf(r, ids));
      else r.skipField(tag);
    }
  } catch (err: unknown) {
    if (err instanceof MalformedMessage) throw new UndecodableReport(err);
    throw err;
  }
  return {
    ...(domain === undefined ? {} : { domain }),
    ...(usages === undefined ? {} : { bucketQuotaUsages: usages }),
  };
}
