// Log section: level and format.
import { deepFreeze } from '../lib/freeze';
import { LOG_LEVELS } from '../lib/logger';
import { oneOf } from './fields';
import { group, type Values } from './section';
import type { LogSettings } from './types';

/** The reference also accepts `warn`, read here as `warning`. */
const LOG_LEVEL_NAMES = [...LOG_LEVELS, 'warn'] as const;

export const LOG = group('', {
  LOG_LEVEL: oneOf('warning', LOG_LEVEL_NAMES),
  LOG_FORMAT: oneOf('text', ['text', 'json']),
});

export function logSettings(l: Values<typeof LOG>): LogSettings {
  return deepFreeze({
    level: l.LOG_LEVEL === 'warn' ? 'warning' : l.LOG_LEVEL,
    format: l.LOG_FORMAT,
  });
}
