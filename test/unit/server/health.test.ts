// Health from its components, as SPEC.md "States and transitions" says.
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
