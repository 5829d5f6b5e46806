// docs/settings.md is generated from the settings schema: every setting has a meaning and a
// row, no meaning is left for a setting that is gone, and the committed file is current.
import { readFileSync } from 'node:fs';
import { renderSettingsDoc, SETTINGS_DOC } from '../../../scripts/settings-doc';
import { settingGroups } from '../../../src/cli/settings-reference';
import { allSettingNames } from '../../../src/settings';
import { SETTING_DESCRIPTIONS } from '../../../src/settings/descriptions';

it('has a meaning for every setting of the schema (add it to src/settings/descriptions.ts)', () => {
  const rows = settingGroups().flatMap((g) => g.rows);
  expect(rows.map((r) => r.name)).toEqual(allSettingNames());
  expect(rows.filter((r) => r.description === undefined).map((r) => r.name)).toEqual([]);
});

it('has no meaning for a setting the schema does not read', () => {
  const names = new Set(allSettingNames());
  expect(Object.keys(SETTING_DESCRIPTIONS).filter((n) => !names.has(n))).toEqual([]);
});

it('docs/settings.md has a row for every setting', () => {
  const doc = readFileSync(SETTINGS_DOC, 'utf8');
  const rowNames = new Set([...doc.matchAll(/^\| `([A-Z0-9_]+)` +\|/gm)].map((m) => m[1]));
  expect(allSettingNames().filter((n) => !rowNames.has(n))).toEqual([]);
});

it('docs/settings.md is what `npm run docs:settings` writes now', () => {
  const committed = readFileSync(SETTINGS_DOC, 'utf8');
  const fresh = renderSettingsDoc();
  // On a difference, run `npm run docs:settings` and commit docs/settings.md.
  expect(committed).toBe(fresh);
});
