// LIMIT_RESPONSE_HEADERS_FORMAT=ietf: the draft's RateLimit-Policy and RateLimit fields, read
// back with a structured-fields parser (structured-headers), one item per limit.
import { parseList } from 'structured-headers';
import { ManualClock } from '../../../src/lib/clock';
import { loadSettings, SettingsError } from '../../../src/settings';
import { MemoryCounterStore } from '../../../src/store';
import { descriptor as d, engineOf } from '../../helpers/engine';

const CONFIG = `
domain: api
descriptors:
  - key: user
    rate_limit: { unit: second, requests_per_unit: 10, name: "per \\"user\\"" }
    rate_limits:
      - unit: hour
        requests_per_unit: 1000
  - key: path
    rate_limit: { unit: minute, requests_per_unit: 4, algorithm: token_bucket, burst: 8 }
  - key: free
`;

/** Each item of a list field as [name, parameters]. */
function items(value: string | undefined): [unknown, Record<string, unknown>][] {
  return parseList(value ?? '').map(([name, params]) => [name, Object.fromEntries(params)]);
}

async function answer(env: Record<string, string>, hits = 1) {
  const clock = new ManualClock(1_700_000_000_000);
  const store = new MemoryCounterStore({ clock });
  const { engine } = engineOf(store, clock, [CONFIG], env);
  const response = await engine.shouldRateLimit({
    domain: 'api',
    descriptors: [
      d([['user', 'alice']]),
      d([['path', '/a']]),
      d([['free', 'x']]),
      d([['user', 'bob']]),
    ],
    hitsAddend: hits,
  });
  await store.close();
  return response;
}

const field = (headers: readonly { key: string; value: string }[], key: string) =>
  headers.find((h) => h.key === key)?.value;

describe('ietf headers', () => {
  it('list every limit of every descriptor as structured-field items', async () => {
    const response = await answer({
      LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
      LIMIT_RESPONSE_HEADERS_FORMAT: 'ietf',
    });
    expect(response.responseHeadersToAdd.map((h) => h.key)).toEqual([
      'RateLimit-Policy',
      'RateLimit',
    ]);
    expect(items(field(response.responseHeadersToAdd, 'RateLimit-Policy'))).toEqual([
      ['per "user"', { q: 10, w: 1 }],
      ['api.user.hour', { q: 1000, w: 3600 }],
      ['api.path', { q: 4, w: 60, 'rlts-burst': 8 }],
      ['per "user"#2', { q: 10, w: 1 }],
      ['api.user.hour#2', { q: 1000, w: 3600 }],
    ]);
    expect(items(field(response.responseHeadersToAdd, 'RateLimit'))).toEqual([
      ['per "user"', { r: 9, t: 1 }],
      ['api.user.hour', { r: 999, t: 2800 }],
      // One hit of a bucket of 8 refilling every 15 s.
      ['api.path', { r: 7, t: 15 }],
      ['per "user"#2', { r: 9, t: 1 }],
      ['api.user.hour#2', { r: 999, t: 2800 }],
    ]);
    expect(response.requestHeadersToAdd).toEqual([]);
  });

  it('are request headers too with LIMIT_REQUEST_HEADERS_ENABLED', async () => {
    const response = await answer({
      LIMIT_REQUEST_HEADERS_ENABLED: 'true',
      LIMIT_RESPONSE_HEADERS_FORMAT: 'ietf',
    });
    expect(response.responseHeadersToAdd).toEqual([]);
    expect(items(field(response.requestHeadersToAdd, 'RateLimit'))[0]).toEqual([
      'per "user"',
      { r: 9, t: 1 },
    ]);
  });

  it('report a refused limit with what remains of it', async () => {
    const response = await answer(
      { LIMIT_RESPONSE_HEADERS_ENABLED: 'true', LIMIT_RESPONSE_HEADERS_FORMAT: 'ietf' },
      11,
    );
    expect(response.overallCode).toBe('OVER_LIMIT');
    expect(items(field(response.responseHeadersToAdd, 'RateLimit')).slice(0, 3)).toEqual([
      ['per "user"', { r: 0, t: 1 }],
      ['api.user.hour', { r: 989, t: 2800 }],
      ['api.path', { r: 8, t: 0 }],
    ]);
  });

  it('leave the legacy headers as they were by default', async () => {
    const response = await answer({ LIMIT_RESPONSE_HEADERS_ENABLED: 'true' });
    expect(response.responseHeadersToAdd).toEqual([
      { key: 'RateLimit-Limit', value: '4' },
      { key: 'RateLimit-Remaining', value: '7' },
      { key: 'RateLimit-Reset', value: '15' },
    ]);
  });

  it('refuse per-unit headers beside the ietf format at start-up', () => {
    expect(() =>
      loadSettings({
        LIMIT_RESPONSE_HEADERS_FORMAT: 'ietf',
        LIMIT_PER_UNIT_HEADERS_ENABLED: 'true',
      }),
    ).toThrow(SettingsError);
    expect(() => loadSettings({ LIMIT_RESPONSE_HEADERS_FORMAT: 'rfc' })).toThrow(
      /LIMIT_RESPONSE_HEADERS_FORMAT.*legacy, ietf/,
    );
  });
});
