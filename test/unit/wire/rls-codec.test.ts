// The hand-written RateLimitRequest decoder and RateLimitResponse encoder against protobufjs
// reading the same api/ definitions: whatever one side writes, the other reads the same.
import { RequestError, type RateLimitResponse } from '../../../src/engine';
import { loadPackageDefinition } from '../../../src/lib/proto';
import { requestFromJson, requestFromWire, responseFromWire } from '../../../src/server';
import type { WireRequest, WireResponse } from '../../../src/server';
import { varintSize } from '../../../src/server/wire/protobuf';
import {
  decodeRateLimitRequest,
  encodeRateLimitResponse,
} from '../../../src/server/wire/rls-codec';

const method = loadPackageDefinition(['envoy/service/ratelimit/v3/rls.proto'])[
  'envoy.service.ratelimit.v3.RateLimitService'
] as unknown as {
  ShouldRateLimit: {
    requestSerialize: (value: WireRequest) => Buffer;
    requestDeserialize: (bytes: Buffer) => WireRequest;
    responseSerialize: (value: unknown) => Buffer;
    responseDeserialize: (bytes: Buffer) => WireResponse;
  };
};
const rls = method.ShouldRateLimit;

/** A small deterministic generator, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const STRINGS = ['', 'a', 'key', 'dé', '日本語', '🚀', 'x'.repeat(200), 'a b%c'];

function randomRequest(next: () => number): WireRequest {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const descriptors = Array.from({ length: Math.floor(next() * 4) }, () => ({
    entries: Array.from({ length: Math.floor(next() * 4) }, () => ({
      key: pick(STRINGS),
      value: pick(STRINGS),
    })),
    ...(next() < 0.3
      ? { limit: { requestsPerUnit: Math.floor(next() * 2 ** 32), unit: pick([1, 2, 3, 4, 5, 6]) } }
      : {}),
    ...(next() < 0.3 ? { hitsAddend: { value: pick([0, 1, 7, 2 ** 40]) } } : {}),
    ...(next() < 0.3 ? { isNegativeHits: true } : {}),
  }));
  return {
    domain: pick(STRINGS),
    descriptors,
    ...(next() < 0.5 ? { hitsAddend: pick([0, 1, 300, 2 ** 32 - 1]) } : {}),
  };
}

describe('decodeRateLimitRequest', () => {
  it('reads what protobufjs writes, for 500 generated requests', () => {
    const next = random(42);
    for (let i = 0; i < 500; i++) {
      const wire = randomRequest(next);
      const bytes = rls.requestSerialize(wire);
      expect(decodeRateLimitRequest(bytes)).toEqual(requestFromWire(rls.requestDeserialize(bytes)));
    }
  });

  it('reads a message inside a larger buffer without looking past its end', () => {
    const bytes = rls.requestSerialize({
      domain: 'd',
      descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
    });
    const framed = Buffer.concat([
      Buffer.from([0, 0, 0, 0, bytes.length]),
      bytes,
      Buffer.from([0xff]),
    ]);
    expect(decodeRateLimitRequest(framed, 5, 5 + bytes.length)).toEqual({
      domain: 'd',
      descriptors: [
        {
          entries: [{ key: 'k', value: 'v' }],
          limit: undefined,
          hitsAddend: undefined,
          isNegativeHits: false,
        },
      ],
      hitsAddend: 0,
    });
  });

  it('skips fields it does not know, of every wire type, and known numbers of another type', () => {
    const known = rls.requestSerialize({ domain: 'd' });
    const unknown = Buffer.from([
      (9 << 3) | 0,
      0x96,
      0x01, // varint
      (10 << 3) | 1,
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8, // fixed64
      (11 << 3) | 2,
      2,
      0xaa,
      0xbb, // length-delimited
      (12 << 3) | 5,
      1,
      2,
      3,
      4, // fixed32
      (13 << 3) | 3,
      (1 << 3) | 0,
      1,
      (13 << 3) | 4, // a group holding a varint
      (1 << 3) | 0,
      7, // domain's number, written as a varint
    ]);
    expect(decodeRateLimitRequest(Buffer.concat([unknown, known])).domain).toBe('d');
  });

  it('takes the last value of a field written twice, as protobuf readers do', () => {
    const bytes = Buffer.concat([
      rls.requestSerialize({ domain: 'first' }),
      rls.requestSerialize({ domain: 'second' }),
    ]);
    expect(decodeRateLimitRequest(bytes).domain).toBe('second');
    expect(requestFromWire(rls.requestDeserialize(bytes)).domain).toBe('second');
  });

  it('refuses a limit override unit outside SECOND..YEAR, naming the descriptor', () => {
    const bytes = rls.requestSerialize({
      domain: 'd',
      descriptors: [{ entries: [] }, { entries: [], limit: { requestsPerUnit: 1, unit: 0 } }],
    });
    expect(() => decodeRateLimitRequest(bytes)).toThrow(
      'descriptors[1].limit.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR',
    );
  });

  it('refuses a descriptor hits_addend past 2^53', () => {
    const bytes = rls.requestSerialize({
      domain: 'd',
      descriptors: [{ entries: [], hitsAddend: { value: 2 ** 60 } }],
    });
    expect(() => decodeRateLimitRequest(bytes)).toThrow(/descriptors\[0\]\.hits_addend/);
  });

  it('turns every truncation of a valid message into a RequestError or a shorter valid request', () => {
    const bytes = rls.requestSerialize({
      domain: 'domain',
      descriptors: [
        { entries: [{ key: 'k', value: 'v' }], limit: { requestsPerUnit: 300, unit: 2 } },
        { entries: [{ key: 'k2', value: '日本' }], hitsAddend: { value: 5 } },
      ],
      hitsAddend: 2,
    });
    for (let length = 0; length < bytes.length; length++) {
      const cut = bytes.subarray(0, length);
      let ours: unknown;
      try {
        ours = decodeRateLimitRequest(cut);
      } catch (err: unknown) {
        expect(err).toBeInstanceOf(RequestError);
        continue;
      }
      expect(ours).toEqual(requestFromWire(rls.requestDeserialize(cut)));
    }
  });

  it('never throws anything but a RequestError on random bytes', () => {
    const next = random(7);
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(
        Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * 256)),
      );
      try {
        decodeRateLimitRequest(bytes);
      } catch (err: unknown) {
        expect(err).toBeInstanceOf(RequestError);
        expect((err as Error).message).not.toBe('');
      }
    }
  });

  it('reads strings on either side of the short-ASCII path, and refuses bytes not UTF-8', () => {
    // domain (field 1) holding `bytes`.
    const domain = (bytes: Buffer): string =>
      decodeRateLimitRequest(Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes])).domain;
    for (const length of [1, 63, 64, 65, 120]) {
      expect(domain(Buffer.from('a'.repeat(length)))).toBe('a'.repeat(length));
      const accented = `${'a'.repeat(length)}é`;
      expect(domain(Buffer.from(accented))).toBe(accented);
      // A U+FFFD the client wrote is text like any other.
      expect(domain(Buffer.from(`${'a'.repeat(length)}\ufffd`))).toBe(
        `${'a'.repeat(length)}\ufffd`,
      );
      for (const broken of [[0xff], [0xc3], [0x80, 0x61]]) {
        const bytes = Buffer.concat([Buffer.from('a'.repeat(length)), Buffer.from(broken)]);
        expect(() => domain(bytes)).toThrow('a string field is not valid UTF-8');
      }
    }
  });

  it('names what is wrong with broken bytes', () => {
    expect(() => decodeRateLimitRequest(Buffer.from([0x0a, 0x05, 0x61]))).toThrow(
      'the request is not a RateLimitRequest: a field runs past the end of the message',
    );
    expect(() => decodeRateLimitRequest(Buffer.from([0x0f, 0x01]))).toThrow(
      'the request is not a RateLimitRequest: wire type 7 is not supported',
    );
  });
});

function response(overrides: Partial<RateLimitResponse> = {}): RateLimitResponse {
  return {
    overallCode: 'OK',
    statuses: [],
    responseHeadersToAdd: [],
    requestHeadersToAdd: [],
    dynamicMetadata: undefined,
    ...overrides,
  };
}

describe('encodeRateLimitResponse', () => {
  const cases: [string, RateLimitResponse][] = [
    ['an empty OK', response()],
    [
      'statuses of every shape',
      response({
        overallCode: 'OVER_LIMIT',
        statuses: [
          {
            code: 'OK',
            currentLimit: undefined,
            limitRemaining: 0,
            durationUntilResetSeconds: undefined,
          },
          {
            code: 'OVER_LIMIT',
            currentLimit: { requestsPerUnit: 10, unit: 'MINUTE', name: 'per-user' },
            limitRemaining: 0,
            durationUntilResetSeconds: 0,
          },
          {
            code: 'OK',
            currentLimit: { requestsPerUnit: 4294967295, unit: 'WEEK', name: undefined },
            limitRemaining: 4294967295,
            durationUntilResetSeconds: 604799,
          },
        ],
      }),
    ],
    [
      'headers',
      response({
        responseHeadersToAdd: [
          { key: 'x-ratelimit-limit', value: '10, 10;w=60' },
          { key: 'x-ratelimit-remaining', value: '9' },
        ],
        requestHeadersToAdd: [{ key: 'x-empty', value: '' }],
      }),
    ],
    [
      'dynamic metadata of every value kind, nested',
      response({
        dynamicMetadata: {
          n: 1.5,
          s: 'text',
          b: false,
          z: null,
          list: [1, 'two', [true, null], { deep: { deeper: -3 } }],
          nested: { a: { b: { c: 'd' } } },
        },
      }),
    ],
    [
      'sub-messages longer than 127 and 16,383 bytes',
      response({
        statuses: [
          {
            code: 'OK',
            currentLimit: { requestsPerUnit: 1, unit: 'SECOND', name: 'n'.repeat(300) },
            limitRemaining: 1,
            durationUntilResetSeconds: 1,
          },
        ],
        dynamicMetadata: {
          big: 'é'.repeat(20_000),
          many: Array.from({ length: 300 }, (_, i) => i),
        },
      }),
    ],
  ];

  /** The case of that name; a renamed or removed case fails the tests that use it. */
  function caseNamed(name: string): RateLimitResponse {
    const found = cases.find(([n]) => n === name);
    if (found === undefined) throw new Error(`no encoder case named "${name}"`);
    return found[1];
  }

  it.each(cases)('writes %s so that protobufjs reads it back unchanged', (_name, original) => {
    const bytes = encodeRateLimitResponse(original);
    expect(responseFromWire(rls.responseDeserialize(bytes))).toEqual(original);
  });

  it('frames the message for gRPC when asked: flag 0 and the length first', () => {
    const original = caseNamed('statuses of every shape');
    const plain = encodeRateLimitResponse(original);
    const framed = encodeRateLimitResponse(original, true);
    expect(framed[0]).toBe(0);
    expect(framed.readUInt32BE(1)).toBe(plain.length);
    expect(framed.subarray(5)).toEqual(plain);
  });

  it.each(cases)('writes %s byte for byte as protobufjs writes the same fields', (_n, original) => {
    const ours = encodeRateLimitResponse(original);
    const theirs = rls.responseSerialize(rls.responseDeserialize(ours));
    expect(ours.toString('hex')).toBe(theirs.toString('hex'));
  });

  it('keeps earlier results intact when the scratch buffer is reused', () => {
    const a = encodeRateLimitResponse(response({ overallCode: 'OVER_LIMIT' }));
    const copy = Buffer.from(a);
    encodeRateLimitResponse(caseNamed('sub-messages longer than 127 and 16,383 bytes'));
    expect(a).toEqual(copy);
  });
});

describe('varintSize', () => {
  it.each([
    [0, 1],
    [127, 1],
    [128, 2],
    [16_383, 2],
    [16_384, 3],
    [2 ** 32 - 1, 5],
    [2 ** 53 - 1, 8],
  ])('%d takes %d bytes', (value, size) => {
    expect(varintSize(value)).toBe(size);
  });
});

describe('the request limits', () => {
  const limits = {
    maxDescriptors: 2,
    maxEntries: 2,
    maxKeyBytes: 4,
    maxValueBytes: 6,
    maxRequestBytes: 1024,
  };
  const entry = (key: string, value: string) => ({ key, value });
  const cases: [string, WireRequest, string][] = [
    [
      'descriptors',
      { domain: 'd', descriptors: [{ entries: [] }, { entries: [] }, { entries: [] }] },
      'the request has more than 2 descriptors (MAX_DESCRIPTORS_PER_REQUEST)',
    ],
    [
      'entries',
      { domain: 'd', descriptors: [{ entries: [entry('a', ''), entry('b', ''), entry('c', '')] }] },
      'descriptors[0] has more than 2 entries (MAX_ENTRIES_PER_DESCRIPTOR)',
    ],
    [
      'key bytes',
      { domain: 'd', descriptors: [{ entries: [entry('kéyé', 'v')] }] },
      'descriptors[0].entries[0].key is longer than 4 bytes (MAX_DESCRIPTOR_KEY_BYTES)',
    ],
    [
      'value bytes',
      { domain: 'd', descriptors: [{ entries: [entry('k', '日本語')] }] },
      'descriptors[0].entries[0].value is longer than 6 bytes (MAX_DESCRIPTOR_VALUE_BYTES)',
    ],
    [
      'domain bytes',
      { domain: 'domain', descriptors: [{ entries: [] }] },
      'domain is longer than 4 bytes (MAX_DESCRIPTOR_KEY_BYTES)',
    ],
  ];

  it.each(cases)('refuses too many %s on gRPC and JSON with the same words', (_n, wire, words) => {
    const bytes = rls.requestSerialize(wire);
    expect(() => decodeRateLimitRequest(bytes, 0, bytes.length, limits)).toThrow(words);
    expect(() => requestFromJson(JSON.stringify(wire), limits)).toThrow(words);
  });

  it('accepts a request exactly at every limit', () => {
    const wire = {
      domain: 'dddd',
      descriptors: [{ entries: [entry('kkkk', 'vvvvvv'), entry('k', 'v')] }, { entries: [] }],
    };
    const bytes = rls.requestSerialize(wire);
    expect(decodeRateLimitRequest(bytes, 0, bytes.length, limits).descriptors).toHaveLength(2);
    expect(requestFromJson(JSON.stringify(wire), limits).descriptors).toHaveLength(2);
  });
});

describe('the top-level hits_addend and requests_per_unit', () => {
  /** A RateLimitRequest with domain "d" and field 3 (hits_addend) as a ten-byte varint. */
  const withHits = (value: bigint): Buffer => {
    const out = [0x0a, 0x01, 0x64, 0x18];
    let v = value;
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    out.push(Number(v));
    return Buffer.from(out);
  };

  it('refuses a value past 32 bits on gRPC as JSON does, instead of keeping its low bits', () => {
    const words = 'hits_addend must be a whole number from 0 to 4294967295';
    expect(() => decodeRateLimitRequest(withHits(2n ** 32n + 5n))).toThrow(words);
    expect(() => requestFromJson('{"domain":"d","hitsAddend":4294967301}')).toThrow(words);
    expect(decodeRateLimitRequest(withHits(2n ** 32n - 1n)).hitsAddend).toBe(2 ** 32 - 1);
  });

  it('refuses a requests_per_unit override past 32 bits', () => {
    // descriptors[0] { limit { requests_per_unit = 2^32, unit = SECOND } }
    const limit = [0x08, 0x80, 0x80, 0x80, 0x80, 0x10, 0x10, 0x01];
    const descriptor = [0x12, limit.length, ...limit];
    const bytes = Buffer.from([0x0a, 0x01, 0x64, 0x12, descriptor.length, ...descriptor]);
    expect(() => decodeRateLimitRequest(bytes)).toThrow(
      'descriptors[0].limit.requests_per_unit must be a whole number from 0 to 4294967295',
    );
  });
});
