// The error that stops start-up when settings are wrong.

/** One thing wrong with the settings: which setting, the value given and what is accepted. */
export interface SettingsProblem {
  readonly setting: string;
  readonly message: string;
}

/** Thrown by loadSettings(); its message lists every problem, one per line. */
export class SettingsError extends Error {
  readonly code = 'SETTINGS_INVALID';
  constructor(readonly problems: readonly SettingsProblem[]) {
    super(`invalid settings:\n${problems.map((p) => `  ${p.setting}: ${p.message}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}
