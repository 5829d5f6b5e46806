// Reading counters for operators beyond the fixed window: a sliding window's two counters and
// its estimate, a token bucket's TAT as tokens left, several limits on one descriptor, and
// which limit a recorded refusal was over.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore } from '../../../src/store';
import { descriptor, engineOf, request } from '../../helpers/engine';

const CONFIG = `domain: d
descriptors:
  - key: slide
    rate_limit: { unit: minute, requests_per_unit: 10, algorithm: sliding_window }
  - key: bucket
    rate_limit: { unit: second, requests_per_unit: 2, algorithm: token_bucket, burst: 4 }
  - key: two
    rate_limit: { unit: second, requests_per_unit: 5 }
    rate_limits:
      - { unit: minute, requests_per_unit: 3, name: per_minute }
`;

// 30 s into a minute.
const NOW_MS = 1_700_000_010_000;
const MINUTE_START = 1_700_000_010 - 30;
let clock: ManualClock;
let store: MemoryCounterStore;
beforeEach(() => {
  clock = new ManualClock(NOW_MS);
  store = new MemoryCounterStore({ clock });
});
afterEach(async () => {
  await store.close();
});

const call = (key: string, hits = 1) => request('d', [descriptor([[key, 'v']])], hits);

it('shows both windows of a sliding window and the estimate the next request is decided on', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  clock.set(NOW_MS - 60_000);
  await engine.shouldRateLimit(call('slide', 4));
  clock.set(NOW_MS);
  await engine.shouldRateLimit(call('slide', 2));
  const lookup = await engine.readCounters('d', [[{ key: 'slide', value: 'v' }]]);
  if (!lookup.ok) throw new Error(lookup.reason);
  expect(lookup.descriptors[0]?.counters).toEqual([
    expect.objectContaining({
      algorithm: 'sliding_window',
      key: `d_slide_v_${MINUTE_START}`,
      count: 2,
      // 4 × (1 − 30/60) + 2
      remaining: 6,
      sliding: { previousKey: `d_slide_v_${MINUTE_START - 60}`, previousCount: 4, estimate: 4 },
      windowStartSeconds: MINUTE_START,
      resetSeconds: 30,
    }),
  ]);
  const next = await engine.shouldRateLimit(call('slide'));
  expect(next.statuses[0]?.limitRemaining).toBe(5);
});

it('shows a token bucket as tokens left and the time until it is full again', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  await engine.shouldRateLimit(call('bucket', 3));
  const read = async () => {
    const lookup = await engine.readCounters('d', [[{ key: 'bucket', value: 'v' }]]);
    if (!lookup.ok) throw new Error(lookup.reason);
    return lookup.descriptors[0]?.counters[0];
  };
  // T = 0.5 s, a bucket of 4: three hits put the TAT 1.5 s ahead, one token left.
  expect(await read()).toMatchObject({
    algorithm: 'token_bucket',
    burst: 4,
    key: 'd_bucket_v_tat_second',
    count: 3,
    remaining: 1,
    tatUs: NOW_MS * 1000 + 1_500_000,
    resetSeconds: 2,
    windowEndSeconds: 1_700_000_012,
  });
  clock.advance(500);
  expect(await read()).toMatchObject({ count: 2, remaining: 2, resetSeconds: 1 });
  const next = await engine.shouldRateLimit(call('bucket', 2));
  expect(next.statuses[0]).toMatchObject({ code: 'OK', limitRemaining: 0 });
});

it('shows each limit of a descriptor with several, and records the one that refused', async () => {
  const { engine, recentDecisions } = engineOf(store, clock, [CONFIG], {
    DEBUG_RECENT_DECISIONS: '10',
  });
  for (let i = 0; i < 4; i++) await engine.shouldRateLimit(call('two'));
  const lookup = await engine.readCounters('d', [[{ key: 'two', value: 'v' }]]);
  if (!lookup.ok) throw new Error(lookup.reason);
  expect(
    lookup.descriptors[0]?.counters.map((c) => [c.unit, c.name, c.count, c.remaining, c.key]),
  ).toEqual([
    ['SECOND', undefined, 4, 1, 'd_two_v_1700000010'],
    ['MINUTE', 'per_minute', 4, 0, `d_two_v_${MINUTE_START}_minute`],
  ]);
  const refusals = recentDecisions?.newestFirst() ?? [];
  expect(refusals.map((d) => [d.ruleLimit.unit, d.ruleLimit.name, d.remaining])).toEqual([
    ['MINUTE', 'per_minute', 0],
  ]);
});
