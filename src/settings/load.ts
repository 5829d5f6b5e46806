// Reads process.env (or a given map) once into frozen, typed Settings, listing every problem found.
import { deepFreeze } from '../lib/freeze';
import { backendSettings } from './backend';
import { breakerSettings } from './breaker';
import { configSettings } from './config';
import { readSchema, type Environment } from './environment';
import { SettingsError } from './errors';
import { limiterSettings } from './limiter';
import { limitsSettings } from './limits';
import { logSettings } from './log';
import { quotaSettings } from './quota';
import { SCHEMA } from './schema';
import { serverSettings } from './server';
import { statsSettings } from './stats';
import { otlpEndpointProblems, tracingSettings } from './tracing';
import type { Settings } from './types';

/**
 * Parses the environment into Settings. Throws SettingsError listing every problem:
 * unparsable values and settings that exclude each other. Each section checks and builds its
 * own part.
 */
export function loadSettings(env: Environment = process.env): Settings {
  const reading = readSchema(env, SCHEMA);
  const { values: raw, problems } = reading;
  problems.push(...otlpEndpointProblems(env, raw.tracing.TRACING_ENABLED));
  const settings: Settings = {
    server: serverSettings(raw.server, raw.backend.BACKEND_TYPE, problems),
    log: logSettings(raw.log),
    config: configSettings(raw.config, raw.xds, problems),
    stats: statsSettings(
      raw.stats,
      { env, isStatsdExplicit: reading.isGiven('USE_STATSD'), nameOf: reading.nameOf },
      problems,
    ),
    backend: backendSettings(raw, problems),
    limiter: limiterSettings(raw.limiter, problems),
    breaker: breakerSettings(raw.breaker, problems),
    tracing: tracingSettings(raw.tracing),
    limits: limitsSettings(raw.limits, problems),
    quota: quotaSettings(raw.quota, problems),
  };
  if (problems.length > 0) throw new SettingsError(problems);
  return deepFreeze(settings);
}
