// Temporary runtime directories in the reference layout: ROOT/SUBDIRECTORY/APPDIRECTORY/*.yaml.
import {
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class RuntimeDir {
  readonly base: string;
  private version = 0;

  /**
   * @param useSymlink true lays the tree out for RUNTIME_WATCH_ROOT=true: ROOT is a symlink
   * to a versioned directory that repoint() swaps atomically.
   */
  constructor(
    files: Record<string, string>,
    private readonly useSymlink = false,
  ) {
    this.base = mkdtempSync(path.join(tmpdir(), 'rl-runtime-'));
    if (useSymlink) this.repoint(files);
    else this.write(files);
  }

  /** RUNTIME_ROOT for the service. */
  get root(): string {
    return path.join(this.base, 'current');
  }

  /** The directory the files live in. */
  get configDir(): string {
    return path.join(this.root, 'ratelimit', 'config');
  }

  /** Settings that point the service at this directory. */
  env(): Record<string, string> {
    return {
      RUNTIME_ROOT: this.root,
      RUNTIME_SUBDIRECTORY: 'ratelimit',
      RUNTIME_APPDIRECTORY: 'config',
      RUNTIME_WATCH_ROOT: this.useSymlink ? 'true' : 'false',
    };
  }

  /** Writes (or replaces) files in the live directory. */
  write(files: Record<string, string>): void {
    mkdirSync(this.configDir, { recursive: true });
    for (const [name, text] of Object.entries(files)) {
      // Write then rename, so the service never reads half a file.
      const target = path.join(this.configDir, name);
      const temp = path.join(path.dirname(target), `.tmp-${name}`);
      writeFileSync(temp, text);
      renameSync(temp, target);
    }
  }

  remove(name: string): void {
    unlinkSync(path.join(this.configDir, name));
  }

  /** Builds a new versioned tree with exactly `files` and swaps the ROOT symlink to it. */
  repoint(files: Record<string, string>): void {
    this.version += 1;
    const versionDir = path.join(this.base, `v${this.version}`);
    const dir = path.join(versionDir, 'ratelimit', 'config');
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
    const link = path.join(this.base, `current.tmp${this.version}`);
    symlinkSync(versionDir, link);
    renameSync(link, this.root);
  }

  destroy(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

/** A runtime directory for a whole test file, removed after its last test. */
export function runtimeDirForFile(files: Record<string, string>): RuntimeDir {
  const runtime = new RuntimeDir(files);
  afterAll(() => {
    runtime.destroy();
  });
  return runtime;
}
