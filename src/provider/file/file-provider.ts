// The file ConfigProvider: RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY/*.yaml, watched.
import { describeError } from '../../lib/errors';
import path from 'node:path';
import { ConfigError, type CompileOptions } from '../../config';
import type { Logger } from '../../lib/logger';
import type { FileSourceSettings } from '../../settings';
import type { Counter, Gauge } from '../../stats';
import { InThreadCompiler, ReadFailure, type ConfigCompiler } from '../compile';
import type { ConfigListener, ConfigProvider } from '../provider';
import { listConfigDirectory, type DirectoryLoad } from './read-directory';
import { ResilientWatch, TreeWatch } from './watch';

/** Loader statistics the reference reports under `runtime.` (operators alert on the failures). */
export interface FileLoaderStats {
  /** Every load of the directory. */
  readonly loadAttempts: Counter;
  /** Files or directories that could not be read. */
  readonly loadFailures: Counter;
  /** Files found by the last load, YAML or not. */
  readonly numValues: Gauge;
}

export interface FileProviderOptions {
  readonly settings: FileSourceSettings;
  readonly compile: CompileOptions;
  readonly logger: Logger;
  readonly loaderStats?: FileLoaderStats;
  /** Events closer together than this cause one reload. */
  readonly debounceMs?: number;
  /** Where files are read, parsed and checked; on this thread when absent. */
  readonly compiler?: ConfigCompiler;
}

/**
 * Loads every file at start and again on change: with RUNTIME_WATCH_ROOT=true when the root
 * symlink is repointed, otherwise on any write, create, chmod or remove in the directory or
 * in any subdirectory the loader reads.
 * A load that fails keeps the previous snapshot (the listener is told why).
 */
export class FileConfigProvider implements ConfigProvider {
  /** RUNTIME_WATCH_ROOT=true: the root symlink's directory. */
  private rootWatch: ResilientWatch | undefined;
  /** RUNTIME_WATCH_ROOT=false: the configuration directory and every subdirectory read. */
  private treeWatch: TreeWatch | undefined;
  private listener: ConfigListener | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private isLoading = false;
  private isReloadPending = false;
  private isStopped = false;
  private idle: Promise<void> = Promise.resolve();
  private readonly compiler: ConfigCompiler;

  constructor(private readonly options: FileProviderOptions) {
    this.compiler = options.compiler ?? new InThreadCompiler();
  }

  /** The directory the configuration files are read from. */
  get directory(): string {
    const settings = this.options.settings;
    return path.join(
      settings.runtimeRoot,
      settings.runtimeSubdirectory,
      settings.runtimeAppDirectory,
    );
  }

  async start(listener: ConfigListener): Promise<void> {
    this.listener = listener;
    const settings = this.options.settings;
    const onError = (err: Error): void => {
      this.options.logger.warn('configuration watch error', { error: err.message });
    };
    if (settings.watchRoot) {
      const root = path.resolve(settings.runtimeRoot);
      const rootName = path.basename(root);
      this.rootWatch = new ResilientWatch(
        path.dirname(root),
        (name) => {
          if (name === null || name === rootName) this.scheduleReload();
        },
        onError,
      );
    } else {
      this.treeWatch = new TreeWatch(
        this.directory,
        () => {
          this.scheduleReload();
        },
        onError,
      );
    }
    await this.reload();
  }

  private scheduleReload(): void {
    if (this.isStopped) return;
    if (this.debounce !== undefined) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.reload();
    }, this.options.debounceMs ?? 100);
    this.debounce.unref();
  }

  /** Loads all files now and tells the listener; reloads asked for meanwhile run after it. */
  reload(): Promise<void> {
    if (this.isLoading) {
      this.isReloadPending = true;
      return this.idle;
    }
    this.isLoading = true;
    this.idle = (async () => {
      try {
        // Events that arrive during a load ask for one more load after it.
        do {
          this.isReloadPending = false;
          await this.loadOnceSafely();
        } while (this.takePendingReload());
      } finally {
        this.isLoading = false;
      }
    })();
    return this.idle;
  }

  /**
   * One load; whatever it throws (the listener included) is logged and refuses the load
   * rather than escaping the watcher's `void this.reload()` as an unhandled rejection, and
   * later changes still reload.
   */
  private async loadOnceSafely(): Promise<void> {
    try {
      await this.loadOnce();
    } catch (err: unknown) {
      this.options.logger.error(
        'configuration load failed unexpectedly; the previous one serves on',
        {
          directory: this.directory,
          error: describeError(err),
        },
      );
    }
  }

  private async loadOnce(): Promise<void> {
    const listener = this.listener;
    if (listener === undefined || this.hasStopped()) return;
    const logger = this.options.logger;
    const loaderStats = this.options.loaderStats;
    loaderStats?.loadAttempts.inc();
    let load: DirectoryLoad;
    try {
      load = await this.loadDirectory();
    } catch (err: unknown) {
      // Only reading fails the load as unreadable; anything else is logged by the caller.
      if (!(err instanceof ReadFailure)) throw err;
      loaderStats?.loadFailures.inc();
      const reason = describeError(err);
      listener.onRejected([
        new ConfigError(
          'READ_FAILED',
          this.directory,
          `cannot read the configuration directory: ${reason}`,
        ),
      ]);
      return;
    }
    const { listing, outcome } = load;
    loaderStats?.numValues.set(listing.files.length + listing.skipped.length);
    for (const file of listing.skipped)
      logger.info('skipping a file that is not .yaml or .yml', { file });
    for (const warning of outcome.warnings) logger.warn(warning);
    if (!outcome.ok) {
      listener.onRejected(outcome.errors);
      return;
    }
    // stop() may have run while the files were read.
    if (this.hasStopped()) return;
    listener.onSnapshot(outcome.snapshot, { kind: 'files', directory: this.directory });
  }

  /** Lists and compiles the directory; the tree watch follows the subdirectories read. */
  private async loadDirectory(): Promise<DirectoryLoad> {
    const tree = this.treeWatch;
    let listing;
    try {
      listing = await listConfigDirectory(
        this.directory,
        this.options.settings.ignoreDotFiles,
        tree === undefined
          ? undefined
          : (subdirectory) => {
              tree.add(subdirectory);
            },
      );
    } catch (err: unknown) {
      throw new ReadFailure(describeError(err));
    }
    tree?.retainOnly(listing.subdirectories);
    const job = { kind: 'files', files: listing.files } as const;
    return { listing, outcome: await this.compiler.compile(job, this.options.compile) };
  }

  private takePendingReload(): boolean {
    return this.isReloadPending && !this.isStopped;
  }

  private hasStopped(): boolean {
    return this.isStopped;
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.debounce !== undefined) clearTimeout(this.debounce);
    this.rootWatch?.close();
    this.treeWatch?.close();
    await this.idle;
  }
}
