// Property tests of the RateLimitRequest decoder against protobufjs: for any bytes, the two
// either both refuse or produce the same request. protobufjs reads the bytes after go-rules.ts
// has applied protobuf-go's rules, where protobufjs departs from them (listed at the end).
import fc from 'fast-check';
import { RequestError, type RateLimitRequest } from '../../../src/engine';
import { loadPackageDefinition, messageType } from '../../../src/lib/proto';
import { requestFromWire, type WireRequest } from '../../../src/server';
import { checkRequestLimits } from '../../../src/server/wire/request-rules';
import { decodeRateLimitRequest } from '../../../src/server/wire/rls-codec';
import { DEFAULT_REQUEST_LIMITS } from '../../../src/settings';
import { normalize, RefusedByRules } from './go-rules';

const rls = (
  loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
    'envoy.service.ratelimit.v3.RateLimitService'
  ] as unknown as {
    ShouldRateLimit: {
      requestSerialize: (value: WireRequest) => Buffer;
      requestDeserialize: (bytes: Buffer) => WireRequest;
    };
  }
).ShouldRateLimit;
const REQUEST = messageType(
  'envoy/service/ratelimit/v3/rls.proto',
  'envoy.service.ratelimit.v3.RateLimitRequest',
);

type Outcome = RateLimitRequest | 'refused';

function ours(bytes: Uint8Array): Outcome {
  try {
    return decodeRateLimitRequest(Buffer.from(bytes));
  } catch (err: unknown) {
    if (err instanceof RequestError) return 'refused';
    throw err;
  }
}

function protobufjs(bytes: Uint8Array): Outcome {
  try {
    const request = requestFromWire(rls.requestDeserialize(normalize(REQUEST, bytes)));
    checkRequestLimits(request, DEFAULT_REQUEST_LIMITS);
    return request;
  } catch (err: unknown) {
    if (err instanceof RefusedByRules || err instanceof RequestError) return 'refused';
    throw err;
  }
}

/** protobufjs on the bytes as they are, to show where it departs from Go. */
function protobufjsAlone(bytes: Buffer): Outcome {
  try {
    return requestFromWire(rls.requestDeserialize(bytes));
  } catch {
    return 'refused';
  }
}

const RUNS = 3000;

/** Asserts the property and that it was not vacuous: some inputs were accepted by both. */
function agreeOn(inputs: fc.Arbitrary<Uint8Array>, minAccepted: number): void {
  let accepted = 0;
  fc.assert(
    fc.property(inputs, (bytes) => {
      const outcome = ours(bytes);
      expect(outcome).toEqual(protobufjs(bytes));
      if (outcome !== 'refused') accepted += 1;
    }),
    { numRuns: RUNS },
  );
  expect(accepted).toBeGreaterThanOrEqual(minAccepted);
}

function varint(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

const text = fc.oneof(
  fc.constantFrom('', 'k', 'value', 'dé', '日本語', '🚀'),
  fc.string({ maxLength: 12 }),
);

const request: fc.Arbitrary<WireRequest> = fc.record({
  domain: text,
  descriptors: fc.array(
    fc.record({
      entries: fc.array(fc.record({ key: text, value: text }), { maxLength: 3 }),
      limit: fc.option(
        fc.record({ requestsPerUnit: fc.nat(), unit: fc.integer({ min: 0, max: 7 }) }),
        { nil: null },
      ),
      hitsAddend: fc.option(fc.record({ value: fc.constantFrom(0, 1, 9, 2 ** 40) }), {
        nil: null,
      }),
      isNegativeHits: fc.boolean(),
    }),
    { maxLength: 3 },
  ),
  hitsAddend: fc.nat(),
});

const mutation = fc.record({
  kind: fc.constantFrom('set', 'insert', 'delete', 'flip'),
  at: fc.nat(),
  byte: fc.integer({ min: 0, max: 255 }),
});

/** A valid request's bytes with one to four bytes changed, inserted, removed or flipped. */
const mutated = fc
  .tuple(request, fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([wire, mutations]) => {
    const bytes = [...rls.requestSerialize(wire)];
    for (const { kind, at, byte } of mutations) {
      const i = at % (bytes.length + 1);
      if (kind === 'insert') bytes.splice(i, 0, byte);
      else if (i === bytes.length) continue;
      else if (kind === 'delete') bytes.splice(i, 1);
      else if (kind === 'set') bytes[i] = byte;
      else bytes[i] = (bytes[i] ?? 0) ^ (1 << (byte & 7));
    }
    return Uint8Array.from(bytes);
  });

/**
 * Messages built field by field from the request's field numbers and others, of every wire
 * type (matching the declared one or not), with nested messages, groups, lengths that lie,
 * text that is not UTF-8 and varints past 32 and 64 bits.
 */
const fields = fc.letrec<{ message: Uint8Array; field: Uint8Array }>((tie) => ({
  message: fc
    .array(tie('field'), { maxLength: 5, depthIdentifier: 'soup' })
    .map((parts) => Uint8Array.from(parts.flatMap((p) => [...p]))),
  field: fc
    .tuple(
      fc.constantFrom(1, 1, 2, 2, 3, 4, 9, 0, 2 ** 29 - 1, 2 ** 29),
      fc.constantFrom(0, 0, 2, 2, 2, 1, 3, 4, 5, 6),
      // At the depth limit oneof takes its first choice, so the nested message comes last.
      fc.oneof(
        { depthIdentifier: 'soup', maxDepth: 3 },
        text.map((t) => Uint8Array.from(Buffer.from(t))),
        fc.uint8Array({ maxLength: 6 }),
        tie('message'),
      ),
      fc.constantFrom(0n, 1n, 6n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 64n - 1n),
      fc.constantFrom(0, 0, 0, 0, -1, 1),
      fc.boolean(),
    )
    .map(([field, wireType, body, number, lie, sameEnd]) => {
      const tag = varint(BigInt(field) * 8n + BigInt(wireType));
      const end = varint(BigInt(sameEnd ? field : field + 1) * 8n + 4n);
      const payload: Record<number, number[]> = {
        0: varint(number),
        1: [...body, 0, 0, 0, 0, 0, 0, 0, 0].slice(0, 8),
        2: [...varint(BigInt(Math.max(0, body.length + lie))), ...body],
        3: [...body, ...end],
        5: [...body, 0, 0, 0, 0].slice(0, 4),
      };
      return Uint8Array.from([...tag, ...(payload[wireType] ?? [])]);
    }),
}));

describe('decodeRateLimitRequest against protobufjs read by protobuf-go rules', () => {
  it('agrees on any bytes', () => {
    agreeOn(fc.uint8Array({ maxLength: 48 }), 1);
  });

  it('agrees on valid requests with a few bytes mutated', () => {
    agreeOn(mutated, RUNS / 20);
  });

  it('agrees on messages built from fields of every wire type, nested', () => {
    agreeOn(fields.message, RUNS / 20);
  });

  it('reads a sub-message within its own length, never from its siblings', () => {
    // domain "d", a descriptor of 2 bytes holding the start of an 8-byte entry.
    const bytes = Buffer.from('0a016412020a080a026b6b12027676', 'hex');
    expect(() => decodeRateLimitRequest(bytes)).toThrow(
      'the request is not a RateLimitRequest: a field runs past the end of the message',
    );
    expect(() => rls.requestDeserialize(bytes)).toThrow(RangeError);
  });
});

describe('where protobufjs departs from protobuf-go, the decoder follows Go', () => {
  const cases: [string, string, Outcome][] = [
    [
      'a known field of another wire type is skipped as unknown (protobufjs reads it as a string)',
      '08050a0164',
      { domain: 'd', descriptors: [], hitsAddend: 0 },
    ],
    [
      'a singular sub-message written twice is merged (protobufjs keeps the second)',
      '0a01641208120208051202100118 03'.replace(' ', ''),
      {
        domain: 'd',
        descriptors: [
          {
            entries: [],
            limit: { requestsPerUnit: 5, unit: 'SECOND' },
            hitsAddend: undefined,
            isNegativeHits: false,
          },
        ],
        hitsAddend: 3,
      },
    ],
    [
      'a string that is not UTF-8 is refused (protobufjs replaces the bytes)',
      '0a02c328',
      'refused',
    ],
    ['field number 0 is refused (protobufjs skips it)', '0a01640001', 'refused'],
    [
      'a group closed by another number is refused (protobufjs skips it)',
      '0a01644b08015c',
      'refused',
    ],
    ['a varint carrying a 65th bit is refused', '0a016420ffffffffffffffffff02', 'refused'],
  ];

  it.each(cases)('%s', (_name, hex, expected) => {
    const bytes = Buffer.from(hex, 'hex');
    expect(ours(bytes)).toEqual(expected);
    expect(protobufjs(bytes)).toEqual(expected);
    expect(protobufjsAlone(bytes)).not.toEqual(expected);
  });
});
