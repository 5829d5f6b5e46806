// Settings that turn on a capability this version does not have yet: refused, never ignored.
import { describeValue } from './environment';
import type { SettingsProblem } from './errors';
import type { RawSettings } from './schema';

export interface NotBuilt {
  /** The setting whose value asks for the capability. */
  readonly setting: string;
  /** The offending value when the capability is asked for, otherwise undefined. */
  readonly asked: (raw: RawSettings) => string | undefined;
  readonly capability: string;
}

const whenTrue =
  (pick: (raw: RawSettings) => boolean) =>
  (raw: RawSettings): string | undefined =>
    pick(raw) ? 'true' : undefined;

/**
 * The rows of both Redis instances. An instance asks for nothing while another backend is
 * chosen (the reference ignores its settings too), nor the per-second one while it is off.
 */
function redisRows(prefix: 'REDIS_' | 'REDIS_PERSECOND_'): NotBuilt[] {
  const instance = (raw: RawSettings): RawSettings['redis'] | undefined => {
    if (raw.backend.BACKEND_TYPE !== 'redis') return undefined;
    if (prefix === 'REDIS_') return raw.redis;
    return raw.redisCommon.PERSECOND ? raw.redisPerSecond : undefined;
  };
  return [
    {
      setting: `${prefix}TYPE`,
      asked: (raw) => {
        const type = instance(raw)?.TYPE;
        return type === undefined || type === 'single' ? undefined : type;
      },
      capability: 'Redis sentinel and cluster modes',
    },
    {
      setting: `${prefix}TLS`,
      asked: whenTrue((raw) => instance(raw)?.TLS === true),
      capability: 'TLS to Redis',
    },
    {
      setting: `${prefix}AWS_IAM_AUTH`,
      asked: whenTrue((raw) => instance(raw)?.AWS_IAM_AUTH === true),
      capability: 'cloud identity (AWS IAM) authentication to Redis',
    },
  ];
}

/**
 * One row per capability not built yet. Landing a capability removes its row; the
 * settings are parsed and validated either way.
 */
export const NOT_BUILT: readonly NotBuilt[] = [
  ...redisRows('REDIS_'),
  ...redisRows('REDIS_PERSECOND_'),
  {
    setting: 'GRPC_SERVER_USE_TLS',
    asked: whenTrue((raw) => raw.server.GRPC_SERVER_USE_TLS),
    capability: 'TLS on the gRPC listener',
  },
  {
    setting: 'TRACING_ENABLED',
    asked: whenTrue((raw) => raw.tracing.TRACING_ENABLED),
    capability: 'OTLP tracing',
  },
];

/** A problem for every row whose capability the settings ask for, under the name given. */
export function notBuiltProblems(
  raw: RawSettings,
  nameOf: (realName: string) => string,
): SettingsProblem[] {
  const problems: SettingsProblem[] = [];
  for (const row of NOT_BUILT) {
    const value = row.asked(raw);
    if (value === undefined) continue;
    problems.push({
      setting: nameOf(row.setting),
      message: `${describeValue(value)} asks for ${row.capability}, which this version does not have yet; unset it or use a release that has it`,
    });
  }
  return problems;
}
