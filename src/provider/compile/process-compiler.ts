// Compiles in a child process: reading, parsing and checking there, the snapshot built here in parts.
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SnapshotBuilder, type CompileOptions, type LoadOutcome } from '../../config';
import { InThreadCompiler, ReadFailure, type CompileJob, type ConfigCompiler } from './compiler';
import { configError, type CompileInput, type FromCompiler, type ToCompiler } from './messages';

/** The built compile script, beside this module in dist/. */
export const COMPILE_SCRIPT = path.join(__dirname, 'compile-process.js');

/** A resource's bytes in a buffer of their own: a Buffer may view a larger pooled one. */
function ownBytes(job: CompileJob): CompileJob {
  if (job.kind === 'files') return job;
  return {
    kind: 'resources',
    resources: job.resources.map((r) => ({
      ...(r.type_url === undefined ? {} : { type_url: r.type_url }),
      ...(r.value === undefined ? {} : { value: new Uint8Array(r.value) }),
    })),
  };
}

function inputOf(job: CompileJob, options: CompileOptions): CompileInput {
  return {
    job: ownBytes(job),
    options: {
      mergeDomainConfig: options.mergeDomainConfig,
      sanitizeDots: options.sanitizeDots,
      ...(options.backend === undefined ? {} : { backend: options.backend }),
    },
  };
}

/**
 * The compile process answered nothing for CONFIG_COMPILE_TIMEOUT and was stopped; the
 * configuration in service is left as it was.
 */
export class CompileTimeout extends Error {
  constructor(timeoutMs: number) {
    super(
      `the compile process did not answer within ${formatMs(timeoutMs)} (CONFIG_COMPILE_TIMEOUT) and was stopped`,
    );
    this.name = 'CompileTimeout';
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * One child process per compile, ended when it is done. A process rather than a worker thread:
 * a worker shares the V8 platform's helper threads with the service, and while it collected
 * the garbage of a large parse the service's own collections waited for them (answers stalled
 * for 150 ms and more with the service's main thread idle). A process has its own, runs at a
 * lower priority, and takes the memory of the parse with it when it ends. It sends each part
 * of the tables when asked, and each is built in the handler of its own message, so that
 * requests are answered between parts.
 */
export class ProcessCompiler implements ConfigCompiler {
  /**
   * @param timeoutMs How long the child may take to answer each message (the job, then each
   *   part asked for) before it is killed and the compile rejects with CompileTimeout; 0 waits
   *   for ever. Only the child's silence counts, not the time this thread spends building.
   */
  constructor(
    private readonly script: string = COMPILE_SCRIPT,
    private readonly timeoutMs = 0,
  ) {}

  compile(job: CompileJob, options: CompileOptions): Promise<LoadOutcome> {
    // No flags of the service's own (a --require, a debugger port) go to the child.
    const child = fork(this.script, [], {
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    return new Promise<LoadOutcome>((resolve, reject) => {
      let isSettled = false;
      let watchdog: NodeJS.Timeout | undefined;
      const settle = (outcome: LoadOutcome | Error): void => {
        if (isSettled) return;
        isSettled = true;
        clearTimeout(watchdog);
        end(child);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const ask = (message: ToCompiler): void => {
        child.send(message);
        if (this.timeoutMs > 0)
          watchdog = setTimeout(() => {
            settle(new CompileTimeout(this.timeoutMs));
          }, this.timeoutMs);
      };
      const receiver = new Receiver(options, ask);
      child.on('message', (message: FromCompiler) => {
        clearTimeout(watchdog);
        try {
          const outcome = receiver.receive(message);
          if (outcome !== undefined) settle(outcome);
        } catch (err: unknown) {
          settle(err instanceof Error ? err : new Error(String(err)));
        }
      });
      child.on('error', settle);
      child.on('exit', (code, signal) => {
        settle(new Error(`the compile process stopped (${signal ?? `exit code ${code}`})`));
      });
      ask({ type: 'job', input: inputOf(job, options) });
    });
  }
}

/** Ends the compile process this compiler started, by its own handle. */
function end(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Follows the compile process's messages: builds the snapshot as parts come, asking for each. */
class Receiver {
  private builder: SnapshotBuilder | undefined;
  private warnings: readonly string[] = [];

  constructor(
    private readonly options: CompileOptions,
    private readonly ask: (message: ToCompiler) => void,
  ) {}

  /** Handles one message; the outcome once there is one. Throws when compiling failed. */
  receive(message: FromCompiler): LoadOutcome | undefined {
    switch (message.type) {
      case 'refused':
        return { ok: false, errors: message.errors.map(configError), warnings: message.warnings };
      case 'readFailed':
        throw new ReadFailure(message.message);
      case 'failed':
        throw new Error(`compiling the configuration failed: ${message.message}`);
      case 'header':
        this.builder = new SnapshotBuilder(message.header, this.options);
        this.warnings = message.warnings;
        return this.nextOrDone(this.builder);
      case 'part': {
        const builder = this.builder ?? new Error('a part came before the header');
        if (builder instanceof Error) throw builder;
        builder.add(message.part);
        return this.nextOrDone(builder);
      }
    }
  }

  private nextOrDone(builder: SnapshotBuilder): LoadOutcome | undefined {
    if (builder.isComplete)
      return { ok: true, snapshot: builder.finish(), warnings: this.warnings };
    this.ask({ type: 'next' });
    return undefined;
  }
}

/**
 * The service's compiler: in a child process, so that loading a large configuration never
 * holds up answers. The child runs the built script; run from sources (a test runner that
 * compiles TypeScript as it loads it) there is none, and the same code runs on this thread,
 * where a hung compile cannot be stopped (`timeoutMs` applies to the child alone).
 */
export function serviceCompiler(timeoutMs = 0): ConfigCompiler {
  return existsSync(COMPILE_SCRIPT)
    ? new ProcessCompiler(COMPILE_SCRIPT, timeoutMs)
    : new InThreadCompiler();
}
