// Reads every configuration file under a directory, as the reference's runtime loader does.
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  compileSources,
  parseConfigFile,
  type CompileOptions,
  type LoadOutcome,
} from '../../config';

/** What one walk of the configuration directory found. */
export interface DirectoryListing {
  /** The YAML files, sorted, symlinked files included. */
  readonly files: readonly string[];
  /** The other files, which are not loaded (the reference counts them all the same). */
  readonly skipped: readonly string[];
  /** The real subdirectories walked, so that a watcher can watch exactly what was read. */
  readonly subdirectories: readonly string[];
}

const CONFIG_EXTENSIONS = new Set(['.yaml', '.yml']);

interface Walk {
  readonly files: string[];
  readonly skipped: string[];
  readonly subdirectories: string[];
}

interface WalkOptions {
  readonly ignoreDotFiles: boolean;
  readonly beforeRead: ((subdirectory: string) => void) | undefined;
}

async function walk(dir: string, options: WalkOptions, into: Walk): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    if (options.ignoreDotFiles && name.startsWith('.')) continue;
    const full = path.join(dir, name);
    const link = await lstat(full);
    if (link.isDirectory()) {
      into.subdirectories.push(full);
      options.beforeRead?.(full);
      await walk(full, options, into);
      continue;
    }
    if (link.isSymbolicLink()) {
      const target = await stat(full).catch(() => undefined);
      if (target === undefined || !target.isFile()) continue;
    } else if (!link.isFile()) {
      continue;
    }
    if (CONFIG_EXTENSIONS.has(path.extname(name).toLowerCase())) into.files.push(full);
    else into.skipped.push(full);
  }
}

/**
 * Lists the YAML files below `dir`, descending into real subdirectories but not into
 * symlinked ones (Kubernetes' `..data` links), while symlinked files are read through.
 * `beforeRead` is told of each subdirectory before it is read (the watcher arms there).
 * Throws when a directory cannot be read.
 */
export async function listConfigDirectory(
  dir: string,
  ignoreDotFiles: boolean,
  beforeRead?: (subdirectory: string) => void,
): Promise<DirectoryListing> {
  const found: Walk = { files: [], skipped: [], subdirectories: [] };
  await walk(dir, { ignoreDotFiles, beforeRead }, found);
  return found;
}

/** One load of a configuration directory: what was found, and what it compiled to. */
export interface DirectoryLoad {
  readonly listing: DirectoryListing;
  readonly outcome: LoadOutcome;
}

export interface DirectoryLoadOptions {
  /** RUNTIME_IGNOREDOTFILES. */
  readonly ignoreDotFiles: boolean;
  readonly compile: CompileOptions;
  /** Told of each subdirectory before it is read. */
  readonly beforeRead?: ((subdirectory: string) => void) | undefined;
}

/**
 * Lists, reads, parses and compiles every configuration file below `dir`: what the service
 * loads, and what ratelimit-config-check checks. Throws when a directory or a file cannot be
 * read; every problem of the files themselves is in the outcome.
 */
export async function loadConfigDirectory(
  dir: string,
  options: DirectoryLoadOptions,
): Promise<DirectoryLoad> {
  const listing = await listConfigDirectory(dir, options.ignoreDotFiles, options.beforeRead);
  const parsed = await Promise.all(
    listing.files.map(async (file) => parseConfigFile(file, await readFile(file, 'utf8'))),
  );
  return { listing, outcome: compileSources(parsed, options.compile) };
}
