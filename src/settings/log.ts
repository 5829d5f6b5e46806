// Log section: level and format.
import { deepFreeze } from '../lib/freeze';
import { LOG_LEVELS, type LogFormat } from '../lib/logger';
import { lookup, type Environment } from './environment';
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

/**
 * LOG_FORMAT as given, for the lines written before the settings are read or when they are
 * refused (a fatal start-up error): text when it is unset or not valid.
 */
export function logFormatOf(env: Environment): LogFormat {
  const found = lookup(env, 'LOG_FORMAT');
  if (found === undefined) return LOG.fields.LOG_FORMAT.defaultValue;
  const parsed = LOG.fields.LOG_FORMAT.parse(found.text);
  return parsed.ok ? parsed.value : 'text';
}
