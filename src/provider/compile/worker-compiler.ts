// Compiles on a worker thread: reading, parsing and checking there, the snapshot built here in parts.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SnapshotBuilder, type CompileOptions, type LoadOutcome } from '../../config';
import { InThreadCompiler, ReadFailure, type CompileJob, type ConfigCompiler } from './compiler';
import { configError, type FromWorker, type ToWorker, type WorkerInput } from './messages';

/** The built worker script, beside this module in dist/. */
export const COMPILE_WORKER_SCRIPT = path.join(__dirname, 'compile-worker.js');

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

/**
 * One worker per compile, ended when it is done: the memory a large parse takes goes back to
 * the system with the thread, instead of staying in this process's heap. The worker sends
 * each part of the tables when asked, and each is built in the handler of its own message, so
 * that requests are answered between parts.
 */
export class WorkerCompiler implements ConfigCompiler {
  constructor(private readonly script: string = COMPILE_WORKER_SCRIPT) {}

  compile(job: CompileJob, options: CompileOptions): Promise<LoadOutcome> {
    const input: WorkerInput = {
      job: ownBytes(job),
      options: {
        mergeDomainConfig: options.mergeDomainConfig,
        sanitizeDots: options.sanitizeDots,
        ...(options.backend === undefined ? {} : { backend: options.backend }),
      },
    };
    const worker = new Worker(this.script, { workerData: input });
    return new Promise<LoadOutcome>((resolve, reject) => {
      let isSettled = false;
      const settle = (outcome: LoadOutcome | Error): void => {
        if (isSettled) return;
        isSettled = true;
        void worker.terminate();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const receiver = new Receiver(options, (message: ToWorker) => {
        worker.postMessage(message);
      });
      worker.on('message', (message: FromWorker) => {
        try {
          const outcome = receiver.receive(message);
          if (outcome !== undefined) settle(outcome);
        } catch (err: unknown) {
          settle(err instanceof Error ? err : new Error(String(err)));
        }
      });
      worker.on('error', settle);
      worker.on('exit', (code) => {
        settle(new Error(`the compile worker stopped (exit code ${code})`));
      });
    });
  }
}

/** Follows the worker's messages: builds the snapshot as parts come, asking for each. */
class Receiver {
  private builder: SnapshotBuilder | undefined;
  private warnings: readonly string[] = [];

  constructor(
    private readonly options: CompileOptions,
    private readonly ask: (message: ToWorker) => void,
  ) {}

  /** Handles one message; the outcome once there is one. Throws when the worker failed. */
  receive(message: FromWorker): LoadOutcome | undefined {
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
 * The service's compiler: on a worker thread, so that loading a large configuration never
 * holds up answers. The worker runs the built script; run from sources (a test runner that
 * compiles TypeScript as it loads it) there is none, and the same code runs on this thread.
 */
export function serviceCompiler(): ConfigCompiler {
  return existsSync(COMPILE_WORKER_SCRIPT) ? new WorkerCompiler() : new InThreadCompiler();
}
