// A file-system watch that survives its target vanishing and coming back.
import { existsSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';

/**
 * Watches `target` (a directory). When it does not exist, or disappears, watches the nearest
 * existing ancestor until it is back. `onEvent` gets the name an event was about, relative
 * to `target`'s directory when watching `target` itself.
 */
export class ResilientWatch {
  private watcher: FSWatcher | undefined;
  private isClosed = false;

  constructor(
    private readonly target: string,
    private readonly onEvent: (filename: string | null) => void,
    private readonly onError: (err: Error) => void,
  ) {
    this.arm();
  }

  private arm(): void {
    if (this.isClosed) return;
    this.watcher?.close();
    this.watcher = undefined;
    let dir = this.target;
    for (;;) {
      try {
        const w = watch(dir, { persistent: false });
        this.watcher = w;
        const watchingTarget = dir === this.target;
        w.on('change', (_type, filename: string | Buffer | null) => {
          if (watchingTarget) {
            // A deleted directory stops reporting; fall back to an ancestor until it is back.
            if (!existsSync(this.target)) this.arm();
            this.onEvent(filename === null ? null : filename.toString());
          } else {
            // Something changed on the way to the target: try to watch it again.
            this.arm();
            this.onEvent(null);
          }
        });
        w.on('error', (err) => {
          this.onError(err);
          this.arm();
        });
        return;
      } catch (err: unknown) {
        const parent = path.dirname(dir);
        if (parent === dir) {
          this.onError(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        dir = parent;
      }
    }
  }

  close(): void {
    this.isClosed = true;
    this.watcher?.close();
    this.watcher = undefined;
  }
}

/**
 * Watches a configuration directory and the subdirectories below it that the loader read
 * (inotify, and so fs.watch on Linux, sees only a directory's own entries). The root survives
 * vanishing (ResilientWatch); the subdirectories are whatever the last load listed.
 */
export class TreeWatch {
  private readonly root: ResilientWatch;
  private readonly subdirectories = new Map<string, FSWatcher>();
  private isClosed = false;

  constructor(
    dir: string,
    private readonly onChange: () => void,
    private readonly onError: (err: Error) => void,
  ) {
    this.root = new ResilientWatch(dir, onChange, onError);
  }

  /**
   * Watches `dir` too (a subdirectory); call it before reading the directory, so that nothing
   * written into it falls between the read and the watch.
   */
  add(dir: string): void {
    if (this.isClosed || this.subdirectories.has(dir)) return;
    const watcher = this.watchOne(dir);
    if (watcher !== undefined) this.subdirectories.set(dir, watcher);
  }

  /** Stops watching the subdirectories not in `directories` (the last load's). */
  retainOnly(directories: readonly string[]): void {
    const wanted = new Set(directories);
    for (const [dir, watcher] of this.subdirectories) {
      if (!wanted.has(dir)) this.forget(dir, watcher);
    }
  }

  private watchOne(dir: string): FSWatcher | undefined {
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false });
    } catch {
      // Gone already: its parent's watch reports that, and the load it causes forgets it.
      return undefined;
    }
    watcher.on('change', () => {
      // A removed directory reports once and then never again; a new one of the same name
      // is watched afresh by the load this event causes.
      if (!existsSync(dir)) this.forget(dir, watcher);
      this.onChange();
    });
    watcher.on('error', (err) => {
      this.forget(dir, watcher);
      this.onError(err);
      this.onChange();
    });
    return watcher;
  }

  private forget(dir: string, watcher: FSWatcher): void {
    watcher.close();
    if (this.subdirectories.get(dir) === watcher) this.subdirectories.delete(dir);
  }

  close(): void {
    this.isClosed = true;
    this.root.close();
    for (const watcher of this.subdirectories.values()) watcher.close();
    this.subdirectories.clear();
  }
}
