// A retried condition is logged once per change of state, not once per attempt.
import { MemoryLogger } from '../../../src/lib/logger';
import { StateLog } from '../../../src/lib/state-log';

it('warns at the first failure and at a new reason, and says once when it works again', () => {
  const logger = new MemoryLogger();
  const log = new StateLog(logger);
  expect(log.succeeded('connected')).toBe(false);
  log.failed('cannot connect', 'ECONNREFUSED', { attempt: 1 });
  log.failed('cannot connect', 'ECONNREFUSED', { attempt: 2 });
  log.failed('cannot connect', 'ECONNREFUSED', { attempt: 3 });
  log.failed('cannot connect', 'certificate refused', { attempt: 4 });
  expect(log.isFailing).toBe(true);
  expect(log.succeeded('connected')).toBe(true);
  expect(log.succeeded('connected')).toBe(false);
  log.failed('cannot connect', 'ECONNREFUSED', { attempt: 1 });
  expect(logger.lines.map((l) => [l.level, l.message, l.fields?.attempt])).toEqual([
    ['warning', 'cannot connect', 1],
    ['debug', 'cannot connect', 2],
    ['debug', 'cannot connect', 3],
    ['warning', 'cannot connect', 4],
    ['info', 'connected', undefined],
    ['warning', 'cannot connect', 1],
  ]);
});
