// Stats section: whether statistics are kept, how often they flush, tags, and the sinks.
import { deepFreeze } from '../lib/freeze';
import { describeValue, type Environment } from './environment';
import type { SettingsProblem } from './errors';
import { bool, duration, int, list, map, oneOf, port, str } from './fields';
import { mogrifierSettings } from './mogrifiers';
import { group, optional, type Values } from './section';
import type { StatsSettings, StatsSinkSettings } from './types';

export const STATS = group('', {
  USE_STATSD: bool(true),
  STATSD_HOST: str('localhost'),
  STATSD_PORT: port(8125),
  STATSD_PROTOCOL: oneOf('udp', ['udp', 'tcp']),
  STATS_MAX_RULE_KEYS: int(10000, 1),
  STATS_MAX_RUNTIME_KEY_BYTES: int(1024 * 1024, 1),
  EXTRA_TAGS: map(),
  STATS_FLUSH_INTERVAL: duration('10s'),
  DISABLE_STATS: bool(false),
  SANITIZE_DESCRIPTOR_METRIC_DOTS: bool(false),
  USE_DOG_STATSD: bool(false),
  USE_DOG_STATSD_MOGRIFIERS: list(),
  USE_PROMETHEUS: bool(false),
  PROMETHEUS_ADDR: str(':9090'),
  PROMETHEUS_PATH: str('/metrics'),
  PROMETHEUS_MAPPER_YAML: str(),
  PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: bool(false),
});

/** What the stats section needs beyond its own values. */
export interface StatsContext {
  /** Mogrifiers are read under names built from USE_DOG_STATSD_MOGRIFIERS. */
  readonly env: Environment;
  /** True when USE_STATSD was given, rather than left at its default. */
  readonly isStatsdExplicit: boolean;
  /** The name a setting was given under, for messages. */
  readonly nameOf: (realName: string) => string;
}

/** `host:port` or `:port` (all interfaces), as Go's listeners read PROMETHEUS_ADDR. */
export function parseListenAddress(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return {
    host: match[1] ?? (match[2] === '' || match[2] === undefined ? '0.0.0.0' : match[2]),
    port,
  };
}

function prometheusSink(st: Values<typeof STATS>, problems: SettingsProblem[]): StatsSinkSettings {
  const address = parseListenAddress(st.PROMETHEUS_ADDR);
  if (address === undefined) {
    problems.push({
      setting: 'PROMETHEUS_ADDR',
      message: `${describeValue(st.PROMETHEUS_ADDR)} is not valid; accepted: host:port or :port`,
    });
  }
  if (!st.PROMETHEUS_PATH.startsWith('/')) {
    problems.push({
      setting: 'PROMETHEUS_PATH',
      message: `${describeValue(st.PROMETHEUS_PATH)} is not valid; accepted: a path starting with /`,
    });
  }
  return {
    type: 'prometheus',
    host: address?.host ?? '0.0.0.0',
    port: address?.port ?? 9090,
    path: st.PROMETHEUS_PATH,
    mapperYaml: optional(st.PROMETHEUS_MAPPER_YAML),
    responseTimeAsMilliseconds: st.PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS,
  };
}

/** DogStatsD replaces statsd: both would write to STATSD_HOST:STATSD_PORT. */
function statsdSink(
  st: Values<typeof STATS>,
  context: StatsContext,
  problems: SettingsProblem[],
): StatsSinkSettings | undefined {
  const address = { host: st.STATSD_HOST, port: st.STATSD_PORT, protocol: st.STATSD_PROTOCOL };
  if (st.USE_DOG_STATSD) {
    // With DISABLE_STATS nothing is sent, so the clash does not matter (the reference starts).
    if (context.isStatsdExplicit && st.USE_STATSD && !st.DISABLE_STATS) {
      problems.push({
        setting: 'USE_DOG_STATSD',
        message:
          'USE_STATSD and USE_DOG_STATSD are both true and both send to STATSD_HOST:STATSD_PORT; set USE_STATSD=false',
      });
    }
    const mogrifiers = mogrifierSettings(context.env, st.USE_DOG_STATSD_MOGRIFIERS, problems);
    return { type: 'dogstatsd', ...address, mogrifiers };
  }
  if (st.USE_STATSD && (context.isStatsdExplicit || !st.USE_PROMETHEUS))
    return { type: 'statsd', ...address };
  return undefined;
}

/**
 * The sinks to flush to. USE_STATSD is on by default only while no other sink is chosen, so
 * USE_PROMETHEUS=true alone does not also send statsd to localhost (the reference refuses
 * that combination unless USE_STATSD=false is also set; both spellings work here).
 */
function statsSinks(
  st: Values<typeof STATS>,
  context: StatsContext,
  problems: SettingsProblem[],
): StatsSinkSettings[] {
  const sinks: StatsSinkSettings[] = [];
  const statsd = statsdSink(st, context, problems);
  if (statsd !== undefined) sinks.push(statsd);
  if (st.USE_PROMETHEUS) sinks.push(prometheusSink(st, problems));
  if (sinks.length === 0) sinks.push({ type: 'stdout' });
  return sinks;
}

export function statsSettings(
  st: Values<typeof STATS>,
  context: StatsContext,
  problems: SettingsProblem[],
): StatsSettings {
  if (st.STATS_FLUSH_INTERVAL <= 0 && !st.DISABLE_STATS) {
    problems.push({
      setting: context.nameOf('STATS_FLUSH_INTERVAL'),
      message: 'must be longer than 0',
    });
  }
  return deepFreeze({
    enabled: !st.DISABLE_STATS,
    flushIntervalMs: st.STATS_FLUSH_INTERVAL,
    sanitizeDescriptorMetricDots: st.SANITIZE_DESCRIPTOR_METRIC_DOTS,
    extraTags: st.EXTRA_TAGS,
    sinks: statsSinks(st, context, problems),
    maxRuleKeys: st.STATS_MAX_RULE_KEYS,
    maxRuntimeKeyBytes: st.STATS_MAX_RUNTIME_KEY_BYTES,
  });
}
