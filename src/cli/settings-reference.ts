// The settings reference read from the schema: one row per setting, grouped by section, with
// its default and meaning, for `ratelimit --help` and the generated docs/settings.md.
import { SETTING_DESCRIPTIONS } from '../settings/descriptions';
import type { FieldSpec } from '../settings/fields';
import { SCHEMA } from '../settings/schema';
import type { AnyGroup } from '../settings/section';

type GroupKey = keyof typeof SCHEMA;

/** Each section's title, in schema order. */
export const GROUP_TITLES: Readonly<Record<GroupKey, string>> = Object.freeze({
  server: 'Listeners and workers',
  log: 'Logging',
  config: 'Where the configuration comes from',
  xds: 'xDS management server (CONFIG_TYPE=GRPC_XDS_SOTW)',
  stats: 'Statistics',
  backend: 'Backend',
  limiter: 'Decisions and headers',
  breaker: 'Backend circuit breaker',
  redisCommon: 'Redis: both instances',
  redis: 'Redis: the main instance',
  redisPerSecond: 'Redis: the per-second instance (REDIS_PERSECOND=true)',
  memcache: 'memcached (BACKEND_TYPE=memcache)',
  tracing: 'Tracing',
  limits: 'Request and connection limits',
  quota: 'Rate Limit Quota Service (RLQS) streams',
});

export interface SettingRow {
  readonly name: string;
  /** The default as it would be written in the environment; empty when unset. */
  readonly defaultText: string;
  /** What the parser accepts, as its refusals say it. */
  readonly accepted: string;
  /** What it means; undefined when the table has no line for it (a test refuses that). */
  readonly description: string | undefined;
}

export interface SettingGroup {
  readonly key: GroupKey;
  readonly title: string;
  readonly prefix: string;
  readonly rows: readonly SettingRow[];
}

function defaultText(spec: FieldSpec<unknown>): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const value = spec.defaultValue;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.join(',');
  return Object.entries(value as Record<string, string>)
    .map(([k, v]) => `${k}:${v}`)
    .join(',');
}

/** The per-second instance's settings mean what their REDIS_ namesakes mean, for it. */
function describe(group: AnyGroup, field: string): string | undefined {
  const own = SETTING_DESCRIPTIONS[group.prefix + field];
  if (own !== undefined || group !== SCHEMA.redisPerSecond) return own;
  const main = SETTING_DESCRIPTIONS[`REDIS_${field}`];
  return main === undefined ? undefined : `as \`REDIS_${field}\`, for the per-second instance`;
}

/** Every setting of the schema, section by section, in schema order. */
export function settingGroups(): SettingGroup[] {
  return (Object.entries(SCHEMA) as [GroupKey, AnyGroup][]).map(([key, group]) => ({
    key,
    title: GROUP_TITLES[key],
    prefix: group.prefix,
    rows: Object.entries(group.fields).map(([field, spec]) => ({
      name: group.prefix + field,
      defaultText: defaultText(spec),
      accepted: spec.accepted,
      description: describe(group, field),
    })),
  }));
}

/** `ratelimit --help`: what the command takes, then every setting by section with its default. */
export function serviceUsage(): string {
  const lines = [
    'usage: ratelimit [-h | --help] [--version]',
    '',
    'Runs the rate limit service. It takes no other arguments: every setting comes from the',
    'environment, under the reference service names (an empty value counts as unset). A bad',
    'value stops start-up naming the setting and what it accepts. docs/settings.md says what',
    'each setting means; below, each with its default.',
  ];
  for (const group of settingGroups()) {
    lines.push('', `${group.title}:`);
    if (group.key === 'redisPerSecond') {
      lines.push('  REDIS_PERSECOND_<NAME>: each REDIS_ instance setting above, for this instance');
      continue;
    }
    for (const row of group.rows) lines.push(`  ${row.name}=${row.defaultText}`);
  }
  return `${lines.join('\n')}\n`;
}
