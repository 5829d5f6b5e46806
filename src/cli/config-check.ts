// ratelimit-config-check: loads a configuration directory (or one file) exactly as the service's
// file provider does, and prints each problem as the service logs it.
import { readFile } from 'node:fs/promises';
import {
  compileSources,
  parseConfigFile,
  refusalMessage,
  type CompileOptions,
  type LoadOutcome,
} from '../config';
import { describeError } from '../lib/errors';
import { loadConfigDirectory, type DirectoryLoad } from '../provider';
import { StatsStore } from '../stats';
import { directoryWarnings, missingRequestsPerUnit } from './config-warnings';
import { commandLineTool, flagIsTrue, usage, type FlagSpec } from './flags';

const COMMAND = 'ratelimit-config-check';

const FLAGS: readonly FlagSpec[] = [
  { name: 'config_dir', help: 'directory holding the rate limit configuration files' },
  { name: 'config_file', help: 'one configuration file to check instead of a directory' },
  {
    name: 'merge_domain_configs',
    help: 'allow several files for one domain (MERGE_DOMAIN_CONFIG)',
    isBoolean: true,
    defaultValue: 'false',
  },
  {
    name: 'strict',
    help: 'exit 1 on warnings too: limits without requests_per_unit, misplaced keys, no YAML file',
    isBoolean: true,
    defaultValue: 'false',
  },
  {
    name: 'ignore_dot_files',
    help: 'skip files and directories whose names start with a dot (RUNTIME_IGNOREDOTFILES)',
    isBoolean: true,
    defaultValue: 'false',
  },
];

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** What was checked: where, how many files, the loader's outcome and our own warnings. */
interface Checked {
  readonly where: string;
  readonly fileCount: number;
  readonly outcome: LoadOutcome;
  readonly warnings: readonly string[];
}

/** Writes the outcome of a load; returns the exit code (-strict: warnings fail it too). */
function report(
  checked: Checked,
  isStrict: boolean,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const { where, fileCount, outcome } = checked;
  const warnings = [...outcome.warnings, ...checked.warnings];
  for (const warning of warnings) err.write(`warning: ${warning}\n`);
  if (!outcome.ok) {
    for (const e of outcome.errors) err.write(`${refusalMessage(e)}\n`);
    err.write(
      `${plural(outcome.errors.length, 'problem')} found; the configuration would be refused\n`,
    );
    return 1;
  }
  if (isStrict && warnings.length > 0) {
    err.write(`${plural(warnings.length, 'warning')} found; -strict counts them as problems\n`);
    return 1;
  }
  const noted = warnings.length === 0 ? '' : ` (${plural(warnings.length, 'warning')} above)`;
  out.write(
    `checked ${plural(fileCount, 'file')} in ${where}: all rate limit configs ok${noted}\n`,
  );
  for (const domain of outcome.snapshot.domains) out.write(`domain: ${domain}\n`);
  return 0;
}

/** Limits without requests_per_unit in the files read, each file read again as text. */
async function limitWarnings(files: readonly string[]): Promise<string[]> {
  const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
  return files.flatMap((f, i) => missingRequestsPerUnit(f, texts[i] ?? ''));
}

/**
 * Runs the check; resolves with the exit code: 0 when the service would load the directory,
 * 1 when it would refuse it or cannot read it, 2 for wrong flags.
 */
const TOOL = {
  command: COMMAND,
  about:
    "Loads rate limit configuration files with the service's own reader and compiler, and prints every problem as the service would log it. Exits 0 when the service would load them, 1 when it would refuse them (or, with -strict, when there is a warning), 2 for wrong flags.",
  flags: FLAGS,
};

export const runConfigCheck = commandLineTool(TOOL, async (flags, out, err) => {
  const dir = flags.get('config_dir')?.[0] ?? '';
  const file = flags.get('config_file')?.[0] ?? '';
  if ((dir === '') === (file === '')) {
    err.write(`give -config_dir or -config_file (one of them)\n${usage(COMMAND, FLAGS)}`);
    return 2;
  }
  const isStrict = flagIsTrue(flags, 'strict');
  const compile: CompileOptions = {
    stats: new StatsStore(false),
    mergeDomainConfig: flagIsTrue(flags, 'merge_domain_configs'),
    sanitizeDots: false,
  };
  if (file !== '') {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e: unknown) {
      err.write(`error reading file ${file}: ${describeError(e)}\n`);
      return 1;
    }
    const outcome = compileSources([parseConfigFile(file, text)], compile);
    const warnings = missingRequestsPerUnit(file, text);
    return report({ where: file, fileCount: 1, outcome, warnings }, isStrict, out, err);
  }
  let load: DirectoryLoad;
  try {
    load = await loadConfigDirectory(dir, {
      ignoreDotFiles: flagIsTrue(flags, 'ignore_dot_files'),
      compile,
    });
  } catch (e: unknown) {
    err.write(`error opening directory ${dir}: ${describeError(e)}\n`);
    return 1;
  }
  const { files, skipped } = load.listing;
  const warnings = [...directoryWarnings(dir, files, skipped), ...(await limitWarnings(files))];
  const checked = { where: dir, fileCount: files.length, outcome: load.outcome, warnings };
  return report(checked, isStrict, out, err);
});
