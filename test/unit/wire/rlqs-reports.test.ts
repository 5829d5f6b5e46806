// The RLQS report decoder against protobufjs (the quota service's own decodeReports) on any
// report Envoy can encode, protobuf-go's rules where protobufjs departs from them, and the
// stream's cache of bucket ids.
import fc from 'fast-check';
import { messageType } from '../../../src/lib/proto';
import { decodeReports, RLQS_PROTO, UndecodableReport } from '../../../src/quota';
import {
  BucketIdCache,
  cachedIdCost,
  decodeUsageReports,
} from '../../../src/server/wire/rlqs-reports';

const REPORTS = messageType(
  RLQS_PROTO,
  'envoy.service.rate_limit_quota.v3.RateLimitQuotaUsageReports',
);

const decode = (bytes: Uint8Array, ids?: BucketIdCache): unknown => {
  const buf = Buffer.from(bytes);
  return decodeUsageReports(buf, 0, buf.length, ids);
};

function encode(report: Record<string, unknown>): Buffer {
  return Buffer.from(REPORTS.encode(REPORTS.fromObject(report)).finish());
}

/** Plain objects, so that a null-prototype map compares like protobufjs's. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

// protobufjs turns a key named __proto__ into the object's prototype: not a key to compare on.
const text = fc.string({ maxLength: 12 }).filter((s) => s !== '__proto__');
const usage = fc.record(
  {
    bucketId: fc.record({ bucket: fc.dictionary(text, text, { maxKeys: 4 }) }),
    timeElapsed: fc.record(
      {
        seconds: fc.integer({ min: -1e12, max: 1e12 }),
        nanos: fc.integer({ min: -999_999_999, max: 999_999_999 }),
      },
      { requiredKeys: [] },
    ),
    numRequestsAllowed: fc.maxSafeNat(),
    numRequestsDenied: fc.maxSafeNat(),
  },
  { requiredKeys: [] },
);
const report = fc.record(
  { domain: text, bucketQuotaUsages: fc.array(usage, { maxLength: 5 }) },
  { requiredKeys: [] },
);

test('every report Envoy can encode decodes as protobufjs decodes it, with the cache or not', () => {
  const ids = new BucketIdCache(100);
  fc.assert(
    fc.property(report, (r) => {
      const bytes = encode(r);
      const expected = plain(decodeReports(bytes));
      expect(plain(decode(bytes))).toEqual(expected);
      expect(plain(decode(bytes, ids))).toEqual(expected);
      expect(plain(decode(bytes, ids))).toEqual(expected);
    }),
    { numRuns: 500 },
  );
});

test('bytes that are not a report throw UndecodableReport and nothing else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        decode(bytes);
      } catch (err: unknown) {
        expect(err).toBeInstanceOf(UndecodableReport);
      }
    }),
    { numRuns: 2000 },
  );
  expect(() => decode(encode({ domain: 'edge' }).subarray(0, 3))).toThrow(UndecodableReport);
});

/** A BucketId sub-message of one pair. */
function bucketIdBytes(key: string, value: string): Buffer {
  const k = Buffer.from(key);
  const v = Buffer.from(value);
  const entry = Buffer.concat([Buffer.from([0x0a, k.length]), k, Buffer.from([0x12, v.length]), v]);
  return Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
}

/** A report of one usage whose fields are `usageFields` as written. */
function oneUsage(usageFields: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x12, usageFields.length]), usageFields]);
}

test("protobuf-go's rules: a bucket id written twice is merged, a field of another wire type skipped", () => {
  const first = bucketIdBytes('name', 'api');
  const second = bucketIdBytes('tenant', 'acme');
  const twice = Buffer.concat([
    Buffer.from([0x0a, first.length]),
    first,
    Buffer.from([0x0a, second.length]),
    second,
  ]);
  const ids = new BucketIdCache(10);
  expect(plain(decode(oneUsage(twice), ids))).toEqual({
    bucketQuotaUsages: [{ bucketId: { bucket: { name: 'api', tenant: 'acme' } } }],
  });
  // The first id, cached, is not changed by the merge.
  const alone = Buffer.concat([Buffer.from([0x0a, first.length]), first]);
  expect(plain(decode(oneUsage(alone), ids))).toEqual({
    bucketQuotaUsages: [{ bucketId: { bucket: { name: 'api' } } }],
  });
  // domain (field 1) as a varint is an unknown field to Go; protobufjs would read a string.
  expect(decode(Buffer.from([0x08, 0x05]))).toEqual({});
});

test('64- and 32-bit signed durations as Go reads them; __proto__ is a key; strings are UTF-8', () => {
  const minusOne = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
  const duration = Buffer.from([0x08, ...minusOne, 0x10, ...minusOne]);
  const fields = Buffer.concat([Buffer.from([0x12, duration.length]), duration]);
  expect(decode(oneUsage(fields))).toEqual({
    bucketQuotaUsages: [{ timeElapsed: { seconds: -1, nanos: -1 } }],
  });
  const proto = bucketIdBytes('__proto__', 'x');
  const decoded = decode(oneUsage(Buffer.concat([Buffer.from([0x0a, proto.length]), proto])));
  expect(
    Object.keys(
      (decoded as { bucketQuotaUsages: { bucketId: { bucket: object } }[] }).bucketQuotaUsages[0]
        ?.bucketId.bucket ?? {},
    ),
  ).toEqual(['__proto__']);
  const bad = Buffer.from([0x0a, 0x02, 0xc3, 0x28]);
  expect(() => decode(bad)).toThrow(UndecodableReport);
});

test('the cache hands out one frozen id per bytes, and starts again past its bound', () => {
  const ids = new BucketIdCache(2);
  const of = (key: string): unknown => {
    const id = bucketIdBytes('name', key);
    const bytes = oneUsage(Buffer.concat([Buffer.from([0x0a, id.length]), id]));
    return (decode(bytes, ids) as { bucketQuotaUsages: { bucketId: unknown }[] })
      .bucketQuotaUsages[0]?.bucketId;
  };
  const a = of('a');
  expect(of('a')).toBe(a);
  expect(Object.isFrozen(a)).toBe(true);
  of('b');
  of('c');
  expect(of('a')).not.toBe(a);
  expect(of('a')).toEqual(a);
});

test('a bucket id past RLQS_MAX_BUCKET_ID_BYTES is marked undecoded and never cached; the report goes on', () => {
  const ledger = {
    held: 0,
    take: (n: number) => ((ledger.held += n), true),
    give: (n: number) => void (ledger.held -= n),
  };
  const ids = new BucketIdCache(100, 64, ledger);
  const long = { name: 'api', tenant: 'x'.repeat(100) };
  const short = { name: 'api', tenant: 'acme' };
  const decoded = decode(
    encode({
      domain: 'edge',
      bucketQuotaUsages: [{ bucketId: { bucket: long } }, { bucketId: { bucket: short } }],
    }),
    ids,
  ) as { bucketQuotaUsages: { bucketId?: unknown; oversizedBucketId?: unknown }[] };
  const [first, second] = decoded.bucketQuotaUsages;
  const longBytes =
    bucketIdBytes('name', 'api').length + bucketIdBytes('tenant', long.tenant).length;
  expect(first).toEqual({ oversizedBucketId: { bytes: longBytes, max: 64 } });
  expect(plain(second?.bucketId)).toEqual({ bucket: short });
  // Only the short id was cached, and charged: its bytes twice and an entry's overhead.
  const shortBytes = bucketIdBytes('name', 'api').length + bucketIdBytes('tenant', 'acme').length;
  expect(ledger.held).toBe(cachedIdCost(shortBytes));
  ids.clear();
  expect(ledger.held).toBe(0);
});

test('an id the ledger refuses is decoded at each report, not kept', () => {
  const ledger = { take: () => false, give: () => undefined };
  const ids = new BucketIdCache(100, 1024, ledger);
  const bytes = encode({
    domain: 'edge',
    bucketQuotaUsages: [{ bucketId: { bucket: { name: 'a' } } }],
  });
  type Decoded = { bucketQuotaUsages: { bucketId: unknown }[] };
  const first = (decode(bytes, ids) as Decoded).bucketQuotaUsages[0]?.bucketId;
  const again = (decode(bytes, ids) as Decoded).bucketQuotaUsages[0]?.bucketId;
  expect(again).not.toBe(first);
  expect(again).toEqual(first);
});
