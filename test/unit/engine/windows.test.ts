// Windows of each unit: cache key start, key expiry and seconds to reset.
import { cacheKey, windowOf } from '../../../src/engine';

const NOW = 1_700_000_000; // 2023-11-14T22:13:20Z

describe('windowOf', () => {
  it.each([
    ['SECOND', 1_700_000_000, 1, 1],
    ['MINUTE', 1_699_999_980, 60, 40],
    ['HOUR', 1_699_999_200, 3600, 2800],
    ['DAY', 1_699_920_000, 86_400, 6400],
    ['WEEK', 1_699_488_000, 604_800, 92_800],
    ['MONTH', 1_697_760_000, 2_592_000, 352_000],
    ['YEAR', 1_671_408_000, 31_536_000, 2_944_000],
  ] as const)('%s counts fixed windows from the epoch', (unit, start, length, reset) => {
    expect(windowOf(unit, NOW, false)).toEqual({
      startSeconds: start,
      expirySeconds: length,
      resetSeconds: reset,
    });
  });

  it('uses the calendar month in UTC when asked; the key expires when the month ends', () => {
    // November 2023 has 30 days; December starts at 1701388800.
    expect(windowOf('MONTH', NOW, true)).toEqual({
      startSeconds: 1_698_796_800,
      expirySeconds: 1_388_800,
      resetSeconds: 1_388_800,
    });
    // February 2024 has 29 days.
    const feb = Date.UTC(2024, 1, 10) / 1000;
    expect(windowOf('MONTH', feb, true)).toEqual({
      startSeconds: Date.UTC(2024, 1, 1) / 1000,
      expirySeconds: Date.UTC(2024, 2, 1) / 1000 - feb,
      resetSeconds: Date.UTC(2024, 2, 1) / 1000 - feb,
    });
    // The last second of December rolls into the next year.
    const last = Date.UTC(2024, 11, 31, 23, 59, 59) / 1000;
    expect(windowOf('MONTH', last, true).resetSeconds).toBe(1);
  });
});

describe('cacheKey', () => {
  it('writes prefix, domain, every key and value, and the window start', () => {
    expect(
      cacheKey(
        'p:',
        'dom',
        [
          { key: 'a', value: '1' },
          { key: 'b', value: '' },
        ],
        undefined,
        60,
      ),
    ).toBe('p:dom_a_1_b__60');
  });

  it('writes the wildcard pattern of a shared threshold instead of the value', () => {
    expect(
      cacheKey(
        '',
        'dom',
        [
          { key: 'path', value: '/files/x' },
          { key: 'u', value: 'v' },
        ],
        ['/files/*', undefined],
        0,
      ),
    ).toBe('dom_path_/files/*_u_v_0');
  });
});
