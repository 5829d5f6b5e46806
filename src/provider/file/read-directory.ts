// Reads every configuration file under a directory, as the reference's runtime loader does.
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** A file's path and text. */
export interface ConfigFileText {
  readonly path: string;
  readonly text: string;
}

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

/** Reads the files of a listing. Throws when one cannot be read. */
export async function readConfigFiles(paths: readonly string[]): Promise<ConfigFileText[]> {
  return Promise.all(paths.map(async (p) => ({ path: p, text: await readFile(p, 'utf8') })));
}
