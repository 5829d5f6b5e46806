// ratelimit-config-check: loads every *.yaml of a directory with the service's own loader.
import { describeError } from '../lib/errors';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { compile, ConfigError, parseConfigFile, type ConfigDocument } from '../config';
import { StatsStore } from '../stats';
import { parseOrExplain, usage, type FlagSpec } from './flags';

const FLAGS: readonly FlagSpec[] = [
  { name: 'config_dir', help: 'directory holding the rate limit configuration files' },
  {
    name: 'merge_domain_configs',
    help: 'allow several files for one domain (MERGE_DOMAIN_CONFIG)',
    isBoolean: true,
    defaultValue: 'false',
  },
];

/** Runs the check; returns the exit code. */
export async function runConfigCheck(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const flags = parseOrExplain('ratelimit-config-check', argv, FLAGS, err);
  if (flags === undefined) return 2;
  const dir = flags.get('config_dir')?.[0];
  if (dir === undefined || dir === '') {
    err.write(`-config_dir is required\n${usage('ratelimit-config-check', FLAGS)}`);
    return 2;
  }
  const merge = ['true', '1', 't', 'TRUE', 'True'].includes(
    flags.get('merge_domain_configs')?.[0] ?? 'false',
  );
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((d) => !d.isDirectory() && /\.ya?ml$/i.test(d.name))
      .map((d) => d.name)
      .sort();
  } catch (e: unknown) {
    err.write(`error opening directory ${dir}: ${describeError(e)}\n`);
    return 1;
  }
  const documents: ConfigDocument[] = [];
  const errors: ConfigError[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const parsed = parseConfigFile(file, await readFile(file, 'utf8'));
    if (parsed instanceof ConfigError) errors.push(parsed);
    else documents.push(parsed);
  }
  const result = compile(documents, {
    stats: new StatsStore(false),
    mergeDomainConfig: merge,
    sanitizeDots: false,
  });
  if (!result.ok) errors.push(...result.errors);
  for (const doc of documents)
    for (const warning of doc.warnings) err.write(`warning: ${warning}\n`);
  if (errors.length > 0 || !result.ok) {
    for (const e of errors) err.write(`error: ${e.message}\n`);
    err.write(
      `${errors.length} problem${errors.length === 1 ? '' : 's'} found; the configuration would be refused\n`,
    );
    return 1;
  }
  out.write(
    `checked ${names.length} file${names.length === 1 ? '' : 's'} in ${dir}: all rate limit configs ok\n`,
  );
  for (const domain of result.snapshot.domains) out.write(`domain: ${domain}\n`);
  return 0;
}
