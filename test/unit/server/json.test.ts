// The proto3 JSON mapping of POST /json: parsing requests and printing responses.
import { RequestError, type RateLimitResponse } from '../../../src/engine';
import { requestFromJson, responseToJson } from '../../../src/server';

function error(body: string): RequestError {
  try {
    requestFromJson(body);
  } catch (err: unknown) {
    if (err instanceof RequestError) return err;
    throw err;
  }
  throw new Error('expected a RequestError');
}

describe('requestFromJson', () => {
  it('reads lowerCamelCase and proto names, numbers as strings, enums by name or number', () => {
    expect(
      requestFromJson(
        JSON.stringify({
          domain: 'd',
          hits_addend: '2',
          descriptors: [
            { entries: [{ key: 'a', value: 'b' }], hitsAddend: 0, is_negative_hits: true },
            { entries: [{ key: 'c' }], limit: { requests_per_unit: 5, unit: 'MINUTE' } },
            { entries: [], limit: { requestsPerUnit: '7', unit: 3 } },
          ],
        }),
      ),
    ).toEqual({
      domain: 'd',
      hitsAddend: 2,
      descriptors: [
        {
          entries: [{ key: 'a', value: 'b' }],
          limit: undefined,
          hitsAddend: 0,
          isNegativeHits: true,
        },
        {
          entries: [{ key: 'c', value: '' }],
          limit: { requestsPerUnit: 5, unit: 'MINUTE' },
          hitsAddend: undefined,
          isNegativeHits: false,
        },
        {
          entries: [],
          limit: { requestsPerUnit: 7, unit: 'HOUR' },
          hitsAddend: undefined,
          isNegativeHits: false,
        },
      ],
    });
  });

  it('treats null as absent, as proto3 JSON does', () => {
    expect(
      requestFromJson(
        '{"domain":"d","descriptors":[{"entries":null,"limit":null}],"hitsAddend":null}',
      ),
    ).toEqual({
      domain: 'd',
      hitsAddend: 0,
      descriptors: [
        { entries: [], limit: undefined, hitsAddend: undefined, isNegativeHits: false },
      ],
    });
  });

  it.each([
    ['{', /^the body is not valid JSON: /],
    ['"text"', /^the request must be a JSON object$/],
    ['{"domain":"d","extra":1}', /^the request has an unknown field "extra"$/],
    [
      '{"descriptors":[{"entries":[{"key":"a","colour":"x"}]}]}',
      /^descriptors\[0\]\.entries\[0\] has an unknown field "colour"$/,
    ],
    [
      '{"descriptors":[{"entries":[{"key":1}]}]}',
      /^descriptors\[0\]\.entries\[0\]\.key must be a string$/,
    ],
    [
      '{"descriptors":[{"isNegativeHits":"yes"}]}',
      /^descriptors\[0\]\.isNegativeHits must be true or false$/,
    ],
    [
      '{"descriptors":[{"limit":{"unit":"WEEK"}}]}',
      /^descriptors\[0\]\.limit\.unit must be one of SECOND, MINUTE, HOUR, DAY, MONTH, YEAR$/,
    ],
    [
      '{"descriptors":[{"limit":{"unit":"HOUR","requestsPerUnit":-1}}]}',
      /^descriptors\[0\]\.limit\.requests_per_unit must be a whole number from 0 to 4294967295$/,
    ],
    ['{"hitsAddend":4294967296}', /^hits_addend must be a whole number from 0 to 4294967295$/],
    [
      '{"descriptors":[{"hitsAddend":1.5}]}',
      /^descriptors\[0\]\.hits_addend must be a whole number/,
    ],
  ])('refuses %s', (body, message) => {
    const err = error(body);
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.message).toMatch(message);
  });
});

describe('responseToJson', () => {
  it('prints enum names, durations as strings, and leaves zero values out', () => {
    const response: RateLimitResponse = {
      overallCode: 'OVER_LIMIT',
      statuses: [
        {
          code: 'OVER_LIMIT',
          currentLimit: { requestsPerUnit: 0, unit: 'SECOND', name: undefined },
          limitRemaining: 0,
          durationUntilResetSeconds: 1,
        },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 10, unit: 'HOUR', name: 'named' },
          limitRemaining: 3,
          durationUntilResetSeconds: 60,
        },
        {
          code: 'OK',
          currentLimit: undefined,
          limitRemaining: 0,
          durationUntilResetSeconds: undefined,
        },
      ],
      responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '0' }],
      requestHeadersToAdd: [],
      dynamicMetadata: { domain: 'd' },
    };
    expect(responseToJson(response)).toEqual({
      overallCode: 'OVER_LIMIT',
      statuses: [
        { code: 'OVER_LIMIT', currentLimit: { unit: 'SECOND' }, durationUntilReset: '1s' },
        {
          code: 'OK',
          currentLimit: { requestsPerUnit: 10, unit: 'HOUR', name: 'named' },
          limitRemaining: 3,
          durationUntilReset: '60s',
        },
        { code: 'OK' },
      ],
      responseHeadersToAdd: [{ key: 'RateLimit-Limit', value: '0' }],
      dynamicMetadata: { domain: 'd' },
    });
  });
});
