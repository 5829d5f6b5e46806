// The compile worker's thread: reads, parses and checks one job, then hands its tables over in parts.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { columnBuffers, stringParts } from '../../config';
import { describeError } from '../../lib/errors';
import { checkJob, NODES_PER_PART, ReadFailure } from './compiler';
import { plainError, type FromWorker, type ToWorker, type WorkerInput } from './messages';

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(message, transfer);
}

async function run(input: WorkerInput): Promise<void> {
  let checked;
  try {
    checked = await checkJob(input.job, input.options);
  } catch (err: unknown) {
    const type = err instanceof ReadFailure ? 'readFailed' : 'failed';
    send({ type, message: describeError(err) });
    return;
  }
  if (!checked.ok) {
    send({ type: 'refused', errors: checked.errors.map(plainError), warnings: checked.warnings });
    return;
  }
  const { header, strings } = checked.tables;
  const parts = stringParts(strings, NODES_PER_PART);
  // Each part goes when the other side asks, so that it builds one before the next arrives;
  // the other side ends this thread once it has them all.
  parentPort?.on('message', (_message: ToWorker) => {
    const part = parts.shift();
    if (part !== undefined) send({ type: 'part', part });
  });
  send({ type: 'header', header, warnings: checked.warnings }, columnBuffers(header));
}

/**
 * Answering comes first: on Linux a thread's nice value is its own, and this thread's is raised
 * (0 names the calling thread), so that on a busy core the service's main thread runs before it.
 * Where that cannot be done the compile runs at the process's priority.
 */
function yieldToAnswering(): void {
  try {
    setPriority(10);
  } catch {
    // not allowed here: the same priority as the main thread
  }
}

yieldToAnswering();
run(workerData as WorkerInput).catch((err: unknown) => {
  send({ type: 'failed', message: describeError(err) });
});
