// The rig's fuzzing inputs (fast-check): the bytes a hostile or broken client may send as a
// gRPC RateLimitRequest, and the bodies it may send to /json.
import fc from 'fast-check';
import { encodeWireRequest, grpcRequest } from './rig';

/** Byte strings a hostile or broken client may send as a RateLimitRequest. */
export function hostileMessages(): fc.Arbitrary<Uint8Array> {
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 64 }),
    fc.string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)) }),
    fc.constant('x'.repeat(9000)),
  );
  const descriptor = fc.record({
    entries: fc.array(fc.record({ key: text, value: text }), { maxLength: 70 }),
    hitsAddend: fc.option(
      fc.record({ value: fc.constantFrom(0, 1, 2 ** 32 - 1, 2 ** 53 - 1, 2 ** 53 + 2) }),
      { nil: undefined },
    ),
    isNegativeHits: fc.boolean(),
  });
  const structured = fc
    .record({
      domain: fc.oneof(fc.constant('hostile'), text),
      descriptors: fc.array(descriptor, { maxLength: 300 }),
      hitsAddend: fc.constantFrom(0, 1, 2 ** 32 - 1),
    })
    .map((request) => new Uint8Array(encodeWireRequest(request)));
  const valid = grpcRequest('hostile', [{ entries: [['user', 'u1']] }]).subarray(5);
  return fc.oneof(
    fc.uint8Array({ maxLength: 512 }),
    fc.integer({ min: 0, max: valid.length }).map((n) => valid.subarray(0, n)),
    fc.array(fc.uint8Array({ maxLength: 8 }), { maxLength: 200 }).map((parts) => {
      // Length-delimited fields nested in each other: as deep as the parts are many.
      let out = Buffer.from(parts[0] ?? []);
      for (const part of parts)
        out = Buffer.concat([Buffer.from([0x12, out.length & 0x7f]), out, part]);
      return out;
    }),
    structured,
  );
}

/** /json bodies a hostile or broken client may send. */
export function hostileBodies(): fc.Arbitrary<string> {
  const extremes = fc.constantFrom(
    -1,
    0,
    2 ** 32 - 1,
    2 ** 32,
    2 ** 53,
    1e308,
    '18446744073709551615',
    'NaN',
    null,
    true,
  );
  const request = fc.record({
    domain: fc.oneof(fc.constant('hostile'), fc.string({ unit: 'binary' })),
    hitsAddend: extremes,
    descriptors: fc.array(
      fc.record({
        entries: fc.array(
          fc.record({ key: fc.string({ unit: 'binary' }), value: fc.string({ unit: 'binary' }) }),
          { maxLength: 70 },
        ),
        hitsAddend: extremes,
        isNegativeHits: fc.oneof(fc.boolean(), fc.constant('yes')),
      }),
      { maxLength: 300 },
    ),
  });
  return fc.oneof(
    { arbitrary: fc.string({ unit: 'binary', maxLength: 256 }), weight: 4 },
    { arbitrary: fc.json(), weight: 4 },
    { arbitrary: request.map((r) => JSON.stringify(r)), weight: 8 },
    {
      arbitrary: fc
        .integer({ min: 1, max: 200_000 })
        .map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
      weight: 2,
    },
    { arbitrary: fc.constant(`{"domain":"${'x'.repeat(2 * 1024 * 1024)}"}`), weight: 1 },
  );
}
