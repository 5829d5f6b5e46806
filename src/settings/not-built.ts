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

/**
 * One row per capability not built yet. Landing a capability removes its row; the
 * settings are parsed and validated either way. Every capability of the specification has
 * landed; a row is `{ setting, asked: (raw) => offending value or undefined, capability }`.
 */
export const NOT_BUILT: readonly NotBuilt[] = [];

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
