// Reading counters for operators: the keys requests count under, read without counting.
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore } from '../../../src/store';
import { descriptor, engineOf, request } from '../../helpers/engine';

const CONFIG = `domain: d
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: free
    rate_limit: { unlimited: true }
  - key: path
    value: /api/*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

// 30 s into a minute, so the window's start, end and reset are all different.
const NOW_MS = 1_700_000_010_000;
const clock = new ManualClock(NOW_MS);
let store: MemoryCounterStore;
beforeEach(() => {
  store = new MemoryCounterStore({ clock });
});
afterEach(async () => {
  await store.close();
});

it('reads what requests counted, and reading twice changes nothing', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  for (let i = 0; i < 3; i++)
    await engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
  const first = await engine.readCounters('d', [[{ key: 'k', value: 'v' }]]);
  const second = await engine.readCounters('d', [[{ key: 'k', value: 'v' }]]);
  expect(second).toEqual(first);
  const windowStart = 1_700_000_010 - (1_700_000_010 % 60);
  expect(first).toEqual({
    ok: true,
    domain: 'd',
    descriptors: [
      {
        entries: [{ key: 'k', value: 'v' }],
        rule: expect.objectContaining({ statKey: 'd.k', requestsPerUnit: 5 }),
        counters: [
          {
            algorithm: 'fixed_window',
            requestsPerUnit: 5,
            unit: 'MINUTE',
            name: undefined,
            key: `d_k_v_${windowStart}`,
            count: 3,
            remaining: 2,
            windowStartSeconds: windowStart,
            windowEndSeconds: windowStart + 60,
            resetSeconds: windowStart + 60 - 1_700_000_010,
            isInLocalCache: false,
          },
        ],
      },
    ],
  });
  // The next request sees the count the reads left alone.
  const next = await engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
  expect(next.statuses[0]?.limitRemaining).toBe(1);
});

it('reads a shared threshold under its pattern, as requests count it', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  await engine.shouldRateLimit(request('d', [descriptor([['path', '/api/a']])]));
  await engine.shouldRateLimit(request('d', [descriptor([['path', '/api/b']])]));
  const lookup = await engine.readCounters('d', [[{ key: 'path', value: '/api/zzz' }]]);
  if (!lookup.ok) throw new Error(lookup.reason);
  expect(lookup.descriptors[0]?.counters.map((c) => [c.key.replace(/_\d+$/, ''), c.count])).toEqual(
    [['d_path_/api/*', 2]],
  );
});

it('answers no counters for an unlimited rule or a descriptor no rule matches', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  const lookup = await engine.readCounters('d', [
    [{ key: 'free', value: 'x' }],
    [{ key: 'nothing', value: 'x' }],
  ]);
  if (!lookup.ok) throw new Error(lookup.reason);
  expect(lookup.descriptors.map((r) => [r.rule?.isUnlimited, r.counters])).toEqual([
    [true, []],
    [undefined, []],
  ]);
});

it('says when the domain is unknown', async () => {
  const { engine } = engineOf(store, clock, [CONFIG]);
  expect(await engine.readCounters('other', [[{ key: 'k', value: 'v' }]])).toEqual({
    ok: false,
    reason: 'unknown-domain',
  });
});

it('tells a key the local cache holds', async () => {
  const { engine } = engineOf(store, clock, [CONFIG], { LOCAL_CACHE_SIZE_IN_BYTES: '100000' });
  for (let i = 0; i < 6; i++)
    await engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
  const lookup = await engine.readCounters('d', [[{ key: 'k', value: 'v' }]]);
  if (!lookup.ok) throw new Error(lookup.reason);
  expect(lookup.descriptors[0]?.counters[0]).toMatchObject({
    count: 6,
    remaining: 0,
    isInLocalCache: true,
  });
});
