// The decision scenario table and the key expiry, run through the engine against a counter
// store: a suite each backend's test file runs (memory in the unit project, servers apart).
import { ManualClock } from '../../src/lib/clock';
import { RateLimitEngine } from '../../src/engine';
import { silentLogger } from '../../src/lib/logger';
import { StatsStore } from '../../src/stats';
import { descriptor, engineOf, limiterSettings, snapshotOf } from '../helpers/engine';
import type { StoreFixture } from '../helpers/stores';
import { ALGORITHM_SCENARIOS } from './algorithm-scenarios';
import { SCENARIOS, START_MS } from './decision-scenarios';

export function decisionBehaviour(
  name: string,
  make: (clock: ManualClock) => Promise<StoreFixture>,
): void {
  describe(`decisions on the ${name} backend`, () => {
    let run = 0;
    it.each([...SCENARIOS, ...ALGORITHM_SCENARIOS].map((s) => [s.name, s] as const))(
      '%s',
      async (_name, scenario) => {
        const clock = new ManualClock(START_MS);
        const fixture = await make(clock);
        const prefix = `s${process.pid}_${Date.now()}_${++run}:`;
        const missing = Object.keys(fixture.store.unsupported).filter((algorithm) =>
          scenario.config.some((text) => text.includes(algorithm)),
        );
        if (missing.length > 0) {
          // A backend that cannot run an algorithm refuses the configuration, naming the rule.
          expect(() => engineOf(fixture.store, clock, scenario.config)).toThrow(
            new RegExp(
              `uses ${missing[0] ?? ''}, which the ${fixture.store.backend} backend cannot run`,
            ),
          );
          await fixture.close();
          return;
        }
        try {
          const { engine, stats } = engineOf(fixture.store, clock, scenario.config, {
            CACHE_KEY_PREFIX: prefix,
            ...scenario.env,
          });
          for (const [i, step] of scenario.steps.entries()) {
            if (step.advanceMs !== undefined) clock.advance(step.advanceMs);
            const response = await engine.shouldRateLimit({
              domain: step.domain ?? scenario.domain,
              descriptors: step.descriptors,
              hitsAddend: step.hitsAddend ?? 0,
            });
            expect({ step: i, overall: response.overallCode, statuses: response.statuses }).toEqual(
              {
                step: i,
                overall: step.overall,
                statuses: step.statuses,
              },
            );
            if (step.responseHeaders !== undefined) {
              expect(response.responseHeadersToAdd.map((h) => [h.key, h.value])).toEqual(
                step.responseHeaders,
              );
            }
            if (step.requestHeaders !== undefined) {
              expect(response.requestHeadersToAdd.map((h) => [h.key, h.value])).toEqual(
                step.requestHeaders,
              );
            }
            if (step.dynamicMetadata !== undefined)
              expect(response.dynamicMetadata).toEqual(step.dynamicMetadata);
          }
          const counters = stats.snapshot().counters;
          for (const [name, value] of Object.entries(scenario.ruleStats ?? {})) {
            expect({
              name,
              value: counters.get(`ratelimit.service.rate_limit.${name}`) ?? 0,
            }).toEqual({
              name,
              value,
            });
          }
          for (const [name, value] of Object.entries(scenario.stats ?? {})) {
            expect({ name, value: counters.get(name) ?? 0 }).toEqual({ name, value });
          }
          for (const [template, value] of Object.entries(scenario.keys ?? {})) {
            const key = template.replace('{p}', prefix);
            expect({ key, value: await fixture.rawValue(key) }).toEqual({ key, value });
          }
          for (const [template, ttl] of Object.entries(scenario.ttls ?? {})) {
            const key = template.replace('{p}', prefix);
            const actual = await fixture.ttlSeconds(key);
            expect({ key, ttl: actual === ttl - 1 ? ttl : actual }).toEqual({ key, ttl });
          }
        } finally {
          await fixture.close();
        }
      },
    );
  });

  describe(`key expiry on the ${name} backend`, () => {
    it('is the window length plus a jitter below EXPIRATION_JITTER_MAX_SECONDS', async () => {
      const clock = new ManualClock(START_MS);
      const fixture = await make(clock);
      try {
        const stats = new StatsStore();
        const settings = limiterSettings({
          EXPIRATION_JITTER_MAX_SECONDS: '100',
          CACHE_KEY_PREFIX: `jit${process.pid}_${Date.now()}:`,
        });
        const draws = [0, 0.999];
        const engine = new RateLimitEngine({
          store: fixture.store,
          stats,
          clock,
          settings,
          logger: silentLogger,
          localCache: undefined,
          random: () => draws.shift() ?? 0,
        });
        engine.setSnapshot(
          snapshotOf(
            [
              'domain: j\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: 5 }\n',
            ],
            stats,
          ),
        );
        await engine.shouldRateLimit({
          domain: 'j',
          descriptors: [descriptor([['k', 'a']])],
          hitsAddend: 0,
        });
        await engine.shouldRateLimit({
          domain: 'j',
          descriptors: [descriptor([['k', 'b']])],
          hitsAddend: 0,
        });
        const ttlA = await fixture.ttlSeconds(`${settings.cacheKeyPrefix}j_k_a_1699999980`);
        const ttlB = await fixture.ttlSeconds(`${settings.cacheKeyPrefix}j_k_b_1699999980`);
        expect(ttlA).toBeGreaterThanOrEqual(59);
        expect(ttlA).toBeLessThanOrEqual(60);
        expect(ttlB).toBeGreaterThanOrEqual(158);
        expect(ttlB).toBeLessThanOrEqual(159);
      } finally {
        await fixture.close();
      }
    });
  });
}
