// Configured rules declared without their counters: listed at 0, made when first used, flushed alike.
import { silentLogger } from '../../../src/lib/logger';
import { StatsFlusher, StatsStore, type StatsSink } from '../../../src/stats';

const SUFFIXES = [
  'near_limit',
  'over_limit',
  'over_limit_with_local_cache',
  'shadow_mode',
  'total_hits',
  'total_negative_hits',
  'within_limit',
];

class Lines implements StatsSink {
  readonly lines: string[] = [];
  counter(name: string, delta: number): void {
    this.lines.push(`${name}:${delta}|c`);
  }
  gauge(): void {
    /* not looked at */
  }
  timing(): void {
    /* not looked at */
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

function ruleCounters(store: StatsStore, countersMade = false): [string, number][] {
  return [...store.snapshot({ countersMade }).counters].filter(([n]) => n.includes('.rate_limit.'));
}

it('lists a declared rule at 0 under the names a made one has, and makes it on first use', () => {
  const store = new StatsStore();
  store.declareRules(['d.k_v', 'd.k_v']);
  expect(ruleCounters(store).sort()).toEqual(
    SUFFIXES.map((s) => [`ratelimit.service.rate_limit.d.k_v.${s}`, 0]),
  );
  expect(ruleCounters(store, true)).toEqual([]);
  expect(store.ruleKeyCount).toBe(1);
  const stats = store.forRule('d.k_v');
  stats.totalHits.add(2);
  expect(store.forRule('d.k_v')).toBe(stats);
  expect(store.ruleKeyCount).toBe(1);
  expect(new Map(ruleCounters(store)).get('ratelimit.service.rate_limit.d.k_v.total_hits')).toBe(2);
  expect(ruleCounters(store)).toHaveLength(7);
});

it('flushes the same lines whether a rule was declared or made at load', async () => {
  const flushOf = async (declare: boolean): Promise<string[]> => {
    const store = new StatsStore();
    const sink = new Lines();
    const flusher = new StatsFlusher(store, [sink], silentLogger);
    if (declare) store.declareRules(['d.a', 'd.b']);
    else for (const key of ['d.a', 'd.b']) store.forRule(key);
    await flusher.flush();
    store.forRule('d.b').withinLimit.add(3);
    await flusher.flush();
    store.forRule('d.b').withinLimit.inc();
    await flusher.flush();
    return sink.lines;
  };
  expect(await flushOf(true)).toEqual(await flushOf(false));
  expect(await flushOf(true)).toEqual([
    'ratelimit.service.rate_limit.d.b.within_limit:3|c',
    'ratelimit.service.rate_limit.d.b.within_limit:1|c',
  ]);
});

it('counts declared keys toward the cap, and hands a declared key its own counters past it', () => {
  const store = new StatsStore({ maxRuleKeys: 2 });
  store.declareRules(['d.a', 'd.b']);
  const a = store.forRule('d.a');
  expect(store.forRuntimeRule('d.a_x', a)).toBe(a);
  expect(store.forRuntimeRule('d.b', a).key).toBe('d.b');
  expect(store.ruleKeyCount).toBe(2);
});

it('never releases a runtime key once a configuration declares it', () => {
  const store = new StatsStore({ maxRuleKeys: 10 });
  const runtime = store.forRuntimeRule('d.k_v', undefined);
  store.declareRules(['d.k_v']);
  for (let i = 0; i < 3; i++) expect(store.releaseIdle(1)).toEqual([]);
  expect(store.forRule('d.k_v')).toBe(runtime);
  expect(store.ruleKeyCount).toBe(1);
});

it('declares nothing while statistics are off', () => {
  const store = new StatsStore({ isEnabled: false });
  store.declareRules(['d.k']);
  expect(store.snapshot().counters.size).toBe(0);
  expect(store.ruleKeyCount).toBe(0);
});
