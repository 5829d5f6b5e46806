// The ring of recent refusals: bounded, newest first, and written only on over-limit paths.
import { RecentDecisions, type RecentDecision } from '../../../src/engine';
import { ManualClock } from '../../../src/lib/clock';
import { MemoryCounterStore } from '../../../src/store';
import { descriptor, engineOf, request } from '../../helpers/engine';

const CONFIG = `domain: d
descriptors:
  - key: k
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: shadow
    shadow_mode: true
    rate_limit: { unit: minute, requests_per_unit: 1 }
`;

function decisionFor(seqHint: string): Parameters<RecentDecisions['record']>[0] {
  // Only the fields the ring itself reads matter here; the limit is never formatted.
  return {
    domain: seqHint,
    entries: [],
    limit: undefined as never,
    ruleLimit: undefined as never,
    hits: 1,
    remaining: 0,
    isShadow: false,
    isFromLocalCache: false,
  };
}

describe('RecentDecisions', () => {
  it('keeps the last `capacity` decisions, newest first, numbered from 1', () => {
    const clock = new ManualClock(1000);
    const ring = new RecentDecisions(3, clock);
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      ring.record(decisionFor(name));
      clock.advance(10);
    }
    const held = ring.newestFirst();
    expect(held.map((d) => [d.seq, d.domain, d.atMs])).toEqual([
      [5, 'e', 1040],
      [4, 'd', 1030],
      [3, 'c', 1020],
    ]);
    expect(ring.total).toBe(5);
  });

  it('answers only what came after a sequence number, at most `max`', () => {
    const ring = new RecentDecisions(10, new ManualClock(0));
    for (const name of ['a', 'b', 'c', 'd']) ring.record(decisionFor(name));
    expect(ring.newestFirst(2).map((d) => d.domain)).toEqual(['d', 'c']);
    expect(ring.newestFirst(4)).toEqual([]);
    expect(ring.newestFirst(0, 1).map((d) => d.domain)).toEqual(['d']);
    expect(ring.newestFirst(99)).toEqual([]);
  });

  it('refuses a capacity below 1: a ring that is off is no ring', () => {
    expect(() => new RecentDecisions(0, new ManualClock(0))).toThrow(/at least 1/);
  });
});

describe('the engine records', () => {
  const clock = new ManualClock(1_700_000_000_000);
  let store: MemoryCounterStore;
  beforeEach(() => {
    store = new MemoryCounterStore({ clock });
  });
  afterEach(async () => {
    await store.close();
  });

  const held = (ring: RecentDecisions | undefined): RecentDecision[] => ring?.newestFirst() ?? [];

  it('nothing for descriptors within their limit, one entry per over-limit descriptor', async () => {
    const { engine, recentDecisions } = engineOf(store, clock, [CONFIG], {
      DEBUG_RECENT_DECISIONS: '10',
    });
    const call = () => engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
    await call();
    await call();
    expect(held(recentDecisions)).toEqual([]);
    expect((await call()).overallCode).toBe('OVER_LIMIT');
    const [refusal] = held(recentDecisions);
    expect(refusal).toMatchObject({
      seq: 1,
      atMs: 1_700_000_000_000,
      domain: 'd',
      entries: [{ key: 'k', value: 'v' }],
      hits: 1,
      remaining: 0,
      isShadow: false,
      isFromLocalCache: false,
    });
    expect(refusal?.limit.rule.statKey).toBe('d.k');
  });

  it('a shadow-mode rule that would be over, marked as let through', async () => {
    const { engine, recentDecisions } = engineOf(store, clock, [CONFIG], {
      DEBUG_RECENT_DECISIONS: '10',
    });
    const call = () => engine.shouldRateLimit(request('d', [descriptor([['shadow', 'x']])]));
    await call();
    expect((await call()).overallCode).toBe('OK');
    expect(held(recentDecisions).map((d) => [d.limit.rule.statKey, d.isShadow])).toEqual([
      ['d.shadow', true],
    ]);
  });

  it('refusals the local cache answers, marked so', async () => {
    const { engine, recentDecisions } = engineOf(store, clock, [CONFIG], {
      DEBUG_RECENT_DECISIONS: '10',
      LOCAL_CACHE_SIZE_IN_BYTES: '100000',
    });
    const call = () => engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
    for (let i = 0; i < 4; i++) await call();
    expect(held(recentDecisions).map((d) => d.isFromLocalCache)).toEqual([true, false]);
  });

  it('nothing at all when DEBUG_RECENT_DECISIONS is 0', async () => {
    const { engine, recentDecisions } = engineOf(store, clock, [CONFIG], {
      DEBUG_RECENT_DECISIONS: '0',
    });
    for (let i = 0; i < 3; i++)
      await engine.shouldRateLimit(request('d', [descriptor([['k', 'v']])]));
    expect(recentDecisions).toBeUndefined();
    expect(engine.recentDecisions).toBeUndefined();
  });
});
