// Every setting the service reads, each named once in its section, under the reference's names.
import { BACKEND } from './backend';
import { BREAKER } from './breaker';
import { CONFIG } from './config';
import type { SchemaValues } from './environment';
import { LIMITER } from './limiter';
import { LIMITS } from './limits';
import { LOG } from './log';
import { MEMCACHE } from './memcache';
import { QUOTA } from './quota';
import { REDIS, REDIS_COMMON, REDIS_PER_SECOND } from './redis';
import type { AnyGroup } from './section';
import { SERVER } from './server';
import { STATS } from './stats';
import { TRACING } from './tracing';
import { XDS } from './xds';

/**
 * The groups of every section, in the order they are read and their problems listed. Names
 * are the reference service's; neutral aliases are derived in aliases.ts.
 */
export const SCHEMA = {
  server: SERVER,
  log: LOG,
  config: CONFIG,
  xds: XDS,
  stats: STATS,
  backend: BACKEND,
  limiter: LIMITER,
  breaker: BREAKER,
  redisCommon: REDIS_COMMON,
  redis: REDIS,
  redisPerSecond: REDIS_PER_SECOND,
  memcache: MEMCACHE,
  tracing: TRACING,
  limits: LIMITS,
  quota: QUOTA,
} as const;

/** The parsed values, group by group, under the field names of the schema. */
export type RawSettings = SchemaValues<typeof SCHEMA>;

/** Every setting name the schema defines, in schema order. */
export function allSettingNames(): string[] {
  const groups: readonly AnyGroup[] = Object.values(SCHEMA);
  return groups.flatMap((g) => Object.keys(g.fields).map((field) => g.prefix + field));
}
