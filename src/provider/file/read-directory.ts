// Reads every configuration file under a directory, as the reference's runtime loader does.
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** A file's path and text. */
export interface ConfigFileText {
  readonly path: string;
  readonly text: string;
}

const CONFIG_EXTENSIONS = new Set(['.yaml', '.yml']);

/**
 * Lists YAML files below `dir`, sorted, descending into real subdirectories but not into
 * symlinked ones (Kubernetes' `..data` links), while symlinked files are read through.
 */
export async function listConfigFiles(
  dir: string,
  ignoreDotFiles: boolean,
  skipped: string[] = [],
): Promise<string[]> {
  const out: string[] = [];
  const names = (await readdir(dir)).sort();
  for (const name of names) {
    if (ignoreDotFiles && name.startsWith('.')) continue;
    const full = path.join(dir, name);
    const link = await lstat(full);
    if (link.isDirectory()) {
      out.push(...(await listConfigFiles(full, ignoreDotFiles, skipped)));
      continue;
    }
    if (link.isSymbolicLink()) {
      const target = await stat(full).catch(() => undefined);
      if (target === undefined || !target.isFile()) continue;
    } else if (!link.isFile()) {
      continue;
    }
    if (CONFIG_EXTENSIONS.has(path.extname(name).toLowerCase())) out.push(full);
    else skipped.push(full);
  }
  return out;
}

/** Reads the files listed by listConfigFiles. */
export async function readConfigFiles(paths: readonly string[]): Promise<ConfigFileText[]> {
  return Promise.all(paths.map(async (p) => ({ path: p, text: await readFile(p, 'utf8') })));
}
