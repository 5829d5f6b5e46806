// ratelimit-config-check: loads a configuration directory exactly as the service's file provider does.
import { describeError } from '../lib/errors';
import { loadConfigDirectory, type DirectoryLoad } from '../provider';
import { StatsStore } from '../stats';
import { commandLineTool, flagIsTrue, usage, type FlagSpec } from './flags';

const COMMAND = 'ratelimit-config-check';

const FLAGS: readonly FlagSpec[] = [
  { name: 'config_dir', help: 'directory holding the rate limit configuration files' },
  {
    name: 'merge_domain_configs',
    help: 'allow several files for one domain (MERGE_DOMAIN_CONFIG)',
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

/** Writes the outcome of a load; returns the exit code. */
function report(
  dir: string,
  load: DirectoryLoad,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const { listing, outcome } = load;
  for (const warning of outcome.warnings) err.write(`warning: ${warning}\n`);
  if (!outcome.ok) {
    for (const e of outcome.errors) err.write(`error: ${e.message}\n`);
    err.write(
      `${plural(outcome.errors.length, 'problem')} found; the configuration would be refused\n`,
    );
    return 1;
  }
  out.write(
    `checked ${plural(listing.files.length, 'file')} in ${dir}: all rate limit configs ok\n`,
  );
  for (const domain of outcome.snapshot.domains) out.write(`domain: ${domain}\n`);
  return 0;
}

/**
 * Runs the check; resolves with the exit code: 0 when the service would load the directory,
 * 1 when it would refuse it or cannot read it, 2 for wrong flags.
 */
export const runConfigCheck = commandLineTool(COMMAND, FLAGS, async (flags, out, err) => {
  const dir = flags.get('config_dir')?.[0];
  if (dir === undefined || dir === '') {
    err.write(`-config_dir is required\n${usage(COMMAND, FLAGS)}`);
    return 2;
  }
  let load: DirectoryLoad;
  try {
    load = await loadConfigDirectory(dir, {
      ignoreDotFiles: flagIsTrue(flags, 'ignore_dot_files'),
      compile: {
        stats: new StatsStore(false),
        mergeDomainConfig: flagIsTrue(flags, 'merge_domain_configs'),
        sanitizeDots: false,
      },
    });
  } catch (e: unknown) {
    err.write(`error opening directory ${dir}: ${describeError(e)}\n`);
    return 1;
  }
  return report(dir, load, out, err);
});
