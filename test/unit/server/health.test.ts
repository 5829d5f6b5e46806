// Health from its components: healthy only when every enabled component is.
import { HealthState } from '../../../src/server';

it('starts healthy when the configuration is not required', () => {
  const health = new HealthState({ requireConfig: false });
  expect(health.isHealthy()).toBe(true);
  health.set('config', false);
  expect(health.isHealthy()).toBe(true);
});

it('starts unhealthy until a configuration with a domain is loaded, when required', () => {
  const health = new HealthState({ requireConfig: true });
  const changes: boolean[] = [];
  health.onChange((h) => changes.push(h));
  expect(health.isHealthy()).toBe(false);
  health.set('config', true);
  health.set('config', true);
  health.set('backend', false);
  health.set('backend', true);
  health.set('sigterm', false);
  expect(changes).toEqual([true, false, true, false]);
  expect(health.describe()).toEqual({ backend: true, config: true, sigterm: false });
});

it('reports when each component and the whole last changed', () => {
  let now = 1000;
  const health = new HealthState({ requireConfig: true, nowMs: () => now });
  now = 2000;
  health.set('config', true);
  now = 3000;
  health.set('config', true);
  health.set('backend', true);
  expect(health.report()).toEqual({
    isHealthy: true,
    sinceMs: 2000,
    components: [
      { name: 'backend', isHealthy: true, sinceMs: 1000, affectsHealth: true },
      { name: 'config', isHealthy: true, sinceMs: 2000, affectsHealth: true },
      { name: 'sigterm', isHealthy: true, sinceMs: 1000, affectsHealth: true },
    ],
    breakers: [],
  });
  now = 4000;
  health.set('backend', false);
  expect(health.report()).toMatchObject({
    isHealthy: false,
    sinceMs: 4000,
    components: [{ name: 'backend', isHealthy: false, sinceMs: 4000 }, {}, {}],
  });
});

it('follows the configuration and the backend even when they do not decide health', () => {
  let now = 1000;
  const health = new HealthState({
    requireConfig: false,
    backendAffectsHealth: false,
    nowMs: () => now,
  });
  const changes: boolean[] = [];
  health.onChange((h) => changes.push(h));
  now = 2000;
  health.set('backend', false);
  expect(health.isHealthy()).toBe(true);
  expect(changes).toEqual([]);
  expect(health.report().components).toEqual([
    { name: 'backend', isHealthy: false, sinceMs: 2000, affectsHealth: false },
    { name: 'config', isHealthy: false, sinceMs: 1000, affectsHealth: false },
    { name: 'sigterm', isHealthy: true, sinceMs: 1000, affectsHealth: true },
  ]);
  // /healthcheck/components lists what decides health, and the backend's outage whatever the
  // settings: an operator asking it during an outage sees the backend unhealthy.
  expect(health.describe()).toEqual({ backend: false, sigterm: true });
});

it('reports each breaker with its time, and counts it for health only when configured so', () => {
  let now = 1000;
  const plain = new HealthState({ requireConfig: false, nowMs: () => now });
  const strict = new HealthState({
    requireConfig: false,
    nowMs: () => now,
    breakerAffectsHealth: true,
  });
  now = 2000;
  for (const health of [plain, strict]) health.setBreaker('redis', 'open');
  expect(plain.isHealthy()).toBe(true);
  expect(strict.isHealthy()).toBe(false);
  expect(strict.report()).toMatchObject({
    isHealthy: false,
    sinceMs: 2000,
    breakers: [{ instance: 'redis', state: 'open', sinceMs: 2000 }],
  });
  expect(plain.describe()).toMatchObject({ 'breaker.redis': 'open' });
  now = 3000;
  strict.setBreaker('redis', 'closed');
  expect(strict.report()).toMatchObject({
    isHealthy: true,
    sinceMs: 3000,
    breakers: [{ instance: 'redis', state: 'closed', sinceMs: 3000 }],
  });
});

it('counts the backend only until its first connection when so configured (memcached)', () => {
  const health = new HealthState({
    requireConfig: false,
    backendAffectsHealth: 'until-first-connection',
  });
  const changes: boolean[] = [];
  health.onChange((h) => changes.push(h));
  expect(health.isHealthy()).toBe(false);
  expect(health.describe()).toEqual({ backend: false, sigterm: true });
  health.set('backend', true);
  // After the first connection an outage shows in the components but leaves health alone.
  health.set('backend', false);
  expect(health.isHealthy()).toBe(true);
  expect(health.describe()).toEqual({ backend: false, sigterm: true });
  health.set('backend', true);
  expect(changes).toEqual([true]);
});
