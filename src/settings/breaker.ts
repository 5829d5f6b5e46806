// Breaker section: fail fast while a backend instance hangs (BACKEND_FAILURE_*), off by default.
import { deepFreeze } from '../lib/freeze';
import type { SettingsProblem } from './errors';
import { duration, float, int, oneOf } from './fields';
import { group, type Values } from './section';
import type { BreakerSettings } from './types';

export const BREAKER = group('BACKEND_FAILURE_', {
  THRESHOLD: int(0),
  COOLDOWN: duration('1s'),
  MODE: oneOf('error', ['error', 'allow', 'deny', 'local']),
  LOCAL_SHARE: float(1, 0, 1),
});

export function breakerSettings(
  b: Values<typeof BREAKER>,
  problems: SettingsProblem[],
): BreakerSettings {
  if (b.MODE === 'local' && b.LOCAL_SHARE === 0) {
    problems.push({
      setting: 'BACKEND_FAILURE_LOCAL_SHARE',
      message:
        'must be above 0 with BACKEND_FAILURE_MODE=local: it is the fraction of each limit one instance grants while its backend is away',
    });
  }
  if (b.THRESHOLD > 0 && b.COOLDOWN === 0) {
    problems.push({
      setting: 'BACKEND_FAILURE_COOLDOWN',
      message:
        'must be above 0 while BACKEND_FAILURE_THRESHOLD is on, or the breaker never stays open',
    });
  }
  return deepFreeze({
    threshold: b.THRESHOLD,
    cooldownMs: b.COOLDOWN,
    mode: b.MODE,
    localShare: b.LOCAL_SHARE,
  });
}
