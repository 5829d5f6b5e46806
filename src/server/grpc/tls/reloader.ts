// Watches the gRPC listener's certificate, key and CA files and hands on each good new set.
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { describeError } from '../../../lib/errors';
import type { Logger } from '../../../lib/logger';
import type { GrpcServerTlsSettings } from '../../../settings';
import type { Counter } from '../../../stats';
import { readCredentials, TlsFileError, type TlsCredentials } from './credentials';

/** Writers replace several files one after the other: wait for the burst to end. */
const SETTLE_MS = 100;
/** How soon a watch that failed (its directory went away) is set up again. */
const REWATCH_MS = 1000;

export interface TlsReloadOptions {
  readonly settings: GrpcServerTlsSettings;
  readonly logger: Logger;
  /** Counted once per change whose files cannot be served. */
  readonly reloadErrors: Counter;
  /** Counted once per new set of credentials taken into service. */
  readonly reloadSuccesses: Counter;
  /** Receives each new good set; the previous one keeps serving until then. */
  readonly apply: (credentials: TlsCredentials) => void;
}

/**
 * Reads the credentials at start (a file that cannot be served then stops start-up) and
 * watches the directories holding the files. Watching the directory, not the file, sees
 * every way a file is renewed: rewritten in place, renamed over, or the Kubernetes Secret
 * mount's `..data` symlink swapped to a new directory. A change whose files are broken
 * (unparsable, cut short, the key not matching) is logged with the file and the reason and
 * counted; the previous credentials keep serving.
 */
export class TlsReloader {
  private current: TlsCredentials;
  private readonly watchers = new Map<string, FSWatcher>();
  private settleTimer: NodeJS.Timeout | undefined;
  /** Directories whose watch failed, so the warning is logged once, not every retry. */
  private readonly unwatched = new Set<string>();
  private isClosed = false;

  constructor(private readonly options: TlsReloadOptions) {
    const first = readCredentials(options.settings);
    if (first instanceof TlsFileError) throw first;
    this.current = first;
    const { certFile, keyFile, clientCaFile } = options.settings;
    const files =
      clientCaFile === undefined ? [certFile, keyFile] : [certFile, keyFile, clientCaFile];
    for (const dir of new Set(files.map((f) => path.dirname(path.resolve(f))))) this.watch(dir);
  }

  /** The credentials being served. */
  get credentials(): TlsCredentials {
    return this.current;
  }

  close(): void {
    this.isClosed = true;
    clearTimeout(this.settleTimer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  /** Reads the files again now; what a change in a watched directory leads to. */
  reload(): void {
    if (this.isClosed) return;
    const next = readCredentials(this.options.settings);
    if (next instanceof TlsFileError) {
      this.options.reloadErrors.inc();
      this.options.logger.error(
        'gRPC TLS files not reloaded; the previous credentials keep serving',
        {
          setting: next.setting,
          file: next.file,
          reason: next.reason,
        },
      );
      return;
    }
    if (next.fingerprint === this.current.fingerprint) return;
    this.current = next;
    this.options.apply(next);
    this.options.reloadSuccesses.inc();
    this.options.logger.info('gRPC TLS credentials reloaded for new connections', {
      serial: next.serial,
      validTo: next.validTo,
    });
  }

  private watch(dir: string): void {
    if (this.isClosed) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, () => {
        this.changed();
      });
    } catch (err: unknown) {
      this.rewatchLater(dir, err);
      return;
    }
    watcher.on('error', (err) => {
      watcher.close();
      this.watchers.delete(dir);
      this.rewatchLater(dir, err);
    });
    this.watchers.set(dir, watcher);
    this.unwatched.delete(dir);
  }

  private rewatchLater(dir: string, err: unknown): void {
    if (!this.unwatched.has(dir)) {
      this.unwatched.add(dir);
      this.options.logger.warn('cannot watch a gRPC TLS directory; trying again each second', {
        dir,
        error: describeError(err),
      });
    }
    const timer = setTimeout(() => {
      this.watch(dir);
      this.changed();
    }, REWATCH_MS);
    timer.unref();
  }

  private changed(): void {
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.reload();
    }, SETTLE_MS);
    this.settleTimer.unref();
  }
}
