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
 * One row per capability not built yet. Landing a capability removes its row; the
 * settings are parsed and validated either way.
 */
export const NOT_BUILT: readonly NotBuilt[] = [
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
