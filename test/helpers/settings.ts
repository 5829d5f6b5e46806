// Settings as a test reads them: the problems a SettingsError lists, as "SETTING: message".
import { loadSettings, SettingsError } from '../../src/settings';

/** Every problem loadSettings reports for `env`; fails the test when it accepts it. */
export function settingsProblems(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
  } catch (err: unknown) {
    if (err instanceof SettingsError) return err.problems.map((p) => `${p.setting}: ${p.message}`);
    throw err;
  }
  throw new Error('expected a SettingsError');
}
