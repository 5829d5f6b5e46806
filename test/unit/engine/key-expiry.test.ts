// The expiry the engine gives a key: the window's, plus the jitter; calendar months end on time.
import { ManualClock } from '../../../src/lib/clock';
import { descriptor, engineOf } from '../../helpers/engine';
import { memoryFixture } from '../../helpers/stores';

const MONTHLY =
  'domain: m\ndescriptors:\n  - key: k\n    rate_limit: { unit: month, requests_per_unit: 5 }\n';

const monthStart = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
};
const fixedStart = (ms: number): number => {
  const s = Math.floor(ms / 1000);
  return s - (s % 2_592_000);
};

/** The TTL the key of one request gets at `nowMs`, as the store holds it. */
async function ttlAt(
  nowMs: number,
  env: Record<string, string>,
  draw = 0,
): Promise<number | undefined> {
  const clock = new ManualClock(nowMs);
  const fixture = memoryFixture(clock);
  try {
    const { engine } = engineOf(
      fixture.store,
      clock,
      [MONTHLY],
      { CACHE_KEY_PREFIX: 'x:', ...env },
      () => draw,
    );
    await engine.shouldRateLimit({
      domain: 'm',
      descriptors: [descriptor([['k', 'v']])],
      hitsAddend: 0,
    });
    const start =
      env.USE_CALENDAR_MONTH_RATE_LIMIT === 'true' ? monthStart(nowMs) : fixedStart(nowMs);
    return await fixture.ttlSeconds(`x:m_k_v_${start}`);
  } finally {
    await fixture.close();
  }
}

describe('with USE_CALENDAR_MONTH_RATE_LIMIT=true a month key expires when the month ends', () => {
  const calendar = { USE_CALENDAR_MONTH_RATE_LIMIT: 'true' };

  it.each([
    // 2023-11-14T22:13:20Z, in a 30-day month: 15 days 1 hour 46 minutes 40 seconds to December.
    ['mid-November', Date.UTC(2023, 10, 14, 22, 13, 20), 1_388_800],
    // February 2024 has 29 days.
    ['February of a leap year', Date.UTC(2024, 1, 10), 20 * 86_400],
    ['the first second of a 31-day month', Date.UTC(2024, 0, 1), 31 * 86_400],
    ['the last second of the year', Date.UTC(2024, 11, 31, 23, 59, 59), 1],
  ])('%s', async (_when, nowMs, secondsToNextMonth) => {
    expect(await ttlAt(nowMs, calendar)).toBe(secondsToNextMonth);
  });

  it('adds the expiry jitter on top', async () => {
    const nowMs = Date.UTC(2023, 10, 14, 22, 13, 20);
    const ttl = await ttlAt(nowMs, { ...calendar, EXPIRATION_JITTER_MAX_SECONDS: '100' }, 0.5);
    expect(ttl).toBe(1_388_800 + 50);
  });
});

it('keeps the fixed 30-day window expiry without calendar months', async () => {
  expect(await ttlAt(Date.UTC(2023, 10, 14, 22, 13, 20), {})).toBe(2_592_000);
});
