// Runs the built `ratelimit-config-check` over rule files, as an operator would before shipping them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN } from '../service-process';

export interface ConfigCheckResult {
  readonly status: number | null;
  readonly output: string;
}

/** Checks a directory of rule files; exit status 0 means every file loads. */
export function configCheckDirectory(dir: string): ConfigCheckResult {
  const run = spawnSync(process.execPath, [BIN.configCheck, '-config_dir', dir], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Writes `files` (name to text) into a fresh directory, checks it, and removes it. */
export function configCheckFiles(files: Readonly<Record<string, string>>): ConfigCheckResult {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rules-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    return configCheckDirectory(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
