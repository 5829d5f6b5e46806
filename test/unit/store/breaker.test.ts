// The circuit breaker per backend instance, on a controlled clock: opening after the threshold,
// each mode's answer while open, one probe after the cooldown, and its statistics.
import { ManualClock } from '../../../src/lib/clock';
import { silentLogger } from '../../../src/lib/logger';
import { loadSettings, type BreakerSettings } from '../../../src/settings';
import { StatsStore } from '../../../src/stats';
import {
  breakerGuard,
  MemoryCounterStore,
  StoreError,
  type BreakerState,
  type CounterStore,
} from '../../../src/store';
import { descriptor, engineOf } from '../../helpers/engine';

/**
 * A memory store whose calls fail with a transient error (a timeout) while `isDown`, in the
 * calling turn as a store without I/O fails.
 */
class FlakyStore extends MemoryCounterStore {
  isDown = false;
  calls = 0;
  override increment(...args: Parameters<MemoryCounterStore['increment']>) {
    this.calls += 1;
    if (this.isDown) throw new StoreError('redis', 'Command timed out', true);
    return super.increment(...args);
  }
}

function breakerSettings(env: Record<string, string>): BreakerSettings {
  return loadSettings({ BACKEND_FAILURE_THRESHOLD: '3', ...env }).breaker;
}

function guarded(env: Record<string, string> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const inner = new FlakyStore({ clock });
  const stats = new StatsStore();
  const states: BreakerState[] = [];
  const store = breakerGuard(breakerSettings(env), {
    clock,
    logger: silentLogger,
    stats,
    report: (_instance, state) => states.push(state),
  })(inner, 'redis');
  return { clock, inner, store, stats, states };
}

const inc = (key: string, hits = 1) => [
  { key, hits, ttlSeconds: 60, isPerSecond: false, isNegative: false },
];

async function failTimes(store: CounterStore, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await expect(store.increment(inc('k'))).rejects.toThrow('timed out');
}

describe('circuit breaker', () => {
  it('is not there with BACKEND_FAILURE_THRESHOLD=0 (the default)', () => {
    const inner = new MemoryCounterStore({ clock: new ManualClock(0) });
    const guard = breakerGuard(loadSettings({}).breaker, {
      clock: new ManualClock(0),
      logger: silentLogger,
      stats: new StatsStore(),
      report: () => undefined,
    });
    expect(guard(inner, 'memory')).toBe(inner);
  });

  it('opens after the threshold of consecutive failures, then answers without the backend', async () => {
    const { inner, store, stats, states } = guarded();
    inner.isDown = true;
    await failTimes(store, 2);
    expect(await Promise.resolve(store.increment(inc('k'))).catch(() => 'failed')).toBe('failed');
    expect(states).toEqual(['closed', 'open']);
    const calls = inner.calls;
    await expect(store.increment(inc('k'))).rejects.toThrow('the circuit breaker of redis is open');
    expect(inner.calls).toBe(calls);
    const counters = stats.snapshot().counters;
    expect(counters.get('ratelimit.circuit_breaker.redis.opened')).toBe(1);
    expect(counters.get('ratelimit.circuit_breaker.redis.answered_error')).toBe(1);
    expect(stats.snapshot().gauges.get('ratelimit.circuit_breaker.redis.state')).toBe(1);
  });

  it('counts only consecutive transient failures; a reply error means the backend answers', async () => {
    const { inner, store, states } = guarded();
    inner.isDown = true;
    await failTimes(store, 2);
    inner.isDown = false;
    await store.increment(inc('k'));
    inner.isDown = true;
    await failTimes(store, 2);
    expect(states).toEqual(['closed']);
  });

  it('sends one probe after the cooldown: success closes, failure opens again', async () => {
    const { clock, inner, store, stats, states } = guarded({ BACKEND_FAILURE_COOLDOWN: '2s' });
    inner.isDown = true;
    await failTimes(store, 3);
    clock.advance(1999);
    await expect(store.increment(inc('k'))).rejects.toThrow('is open');
    clock.advance(1);
    await expect(store.increment(inc('k'))).rejects.toThrow('timed out');
    expect(states).toEqual(['closed', 'open', 'probing', 'open']);
    clock.advance(2000);
    inner.isDown = false;
    const probe = store.increment(inc('k'));
    // While the probe is out, the others are answered as if open.
    await expect(store.increment(inc('k'))).rejects.toThrow('is open');
    expect(await probe).toEqual([1]);
    expect(states).toEqual(['closed', 'open', 'probing', 'open', 'probing', 'closed']);
    expect(await store.increment(inc('k'))).toEqual([2]);
    expect(stats.snapshot().counters.get('ratelimit.circuit_breaker.redis.probes')).toBe(2);
  });

  it.each([
    ['allow', 'OK', 'ratelimit.circuit_breaker.redis.answered_allow'],
    ['deny', 'OVER_LIMIT', 'ratelimit.circuit_breaker.redis.answered_deny'],
  ] as const)('answers %s as %s through the engine', async (mode, code, stat) => {
    const { clock, inner, store, stats: storeStats } = guarded({ BACKEND_FAILURE_MODE: mode });
    const config =
      'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 5 }\n';
    const { engine, localCache } = engineOf(store, clock, [config], {
      LOCAL_CACHE_SIZE_IN_BYTES: '10000',
    });
    const ask = () =>
      engine.shouldRateLimit({
        domain: 'd',
        descriptors: [descriptor([['k', 'v']])],
        hitsAddend: 0,
      });
    inner.isDown = true;
    for (let i = 0; i < 3; i++) await expect(ask()).rejects.toThrow('timed out');
    expect((await ask()).overallCode).toBe(code);
    expect(storeStats.snapshot().counters.get(stat)).toBe(1);
    // A denial is not a count: the local over-limit cache remembers nothing of it.
    expect(localCache?.size).toBe(0);
  });

  it('counts locally with BACKEND_FAILURE_MODE=local, granting the share of each limit', async () => {
    const { clock, inner, store } = guarded({
      BACKEND_FAILURE_MODE: 'local',
      BACKEND_FAILURE_LOCAL_SHARE: '0.5',
    });
    const config = `
domain: d
descriptors:
  - key: k
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: tb
    rate_limit: { unit: hour, requests_per_unit: 10, algorithm: token_bucket }
`;
    const { engine } = engineOf(store, clock, [config]);
    const codes = async (key: string): Promise<string[]> => {
      const out: string[] = [];
      for (let i = 0; i < 7; i++) {
        const r = await engine.shouldRateLimit({
          domain: 'd',
          descriptors: [descriptor([[key, 'v']])],
          hitsAddend: 0,
        });
        out.push(r.overallCode);
      }
      return out;
    };
    inner.isDown = true;
    for (let i = 0; i < 3; i++) await expect(store.increment(inc('x'))).rejects.toThrow();
    const five = ['OK', 'OK', 'OK', 'OK', 'OK', 'OVER_LIMIT', 'OVER_LIMIT'];
    expect(await codes('k')).toEqual(five);
    expect(await codes('tb')).toEqual(five);
  });

  it('refuses a local share of 0 and a cooldown of 0 at start-up', () => {
    expect(() =>
      loadSettings({ BACKEND_FAILURE_MODE: 'local', BACKEND_FAILURE_LOCAL_SHARE: '0' }),
    ).toThrow(/BACKEND_FAILURE_LOCAL_SHARE/);
    expect(() =>
      loadSettings({ BACKEND_FAILURE_THRESHOLD: '2', BACKEND_FAILURE_COOLDOWN: '0s' }),
    ).toThrow(/BACKEND_FAILURE_COOLDOWN/);
    expect(() => loadSettings({ BACKEND_FAILURE_MODE: 'maybe' })).toThrow(
      /BACKEND_FAILURE_MODE.*error, allow, deny, local/,
    );
  });
});
