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
