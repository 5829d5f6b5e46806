// The compile process: reads, parses and checks one job, then hands its tables over in parts.
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { stringParts, type NodeStrings } from '../../config';
import { describeError } from '../../lib/errors';
import { checkJob, NODES_PER_PART, ReadFailure } from './compiler';
import { plainError, type CompileInput, type FromCompiler, type ToCompiler } from './messages';

/**
 * Sends to the service. When the service has gone (it stopped while this checked its job) the
 * channel is closed or breaks (EPIPE): nobody wants the answer, so this process ends quietly
 * rather than as an unhandled error with its stack on the service's standard error.
 */
function send(message: FromCompiler): void {
  if (!process.connected) process.exit(0);
  process.send?.(message, undefined, undefined, (err: Error | null) => {
    if (err !== null) process.exit(0);
  });
}

/** The parts of the strings not yet sent. */
let parts: NodeStrings[] = [];

/** Checks the job; sends the refusal, or the header, keeping the parts for `next`. */
async function run(input: CompileInput): Promise<void> {
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
  parts = stringParts(checked.tables.strings, NODES_PER_PART);
  send({ type: 'header', header: checked.tables.header, warnings: checked.warnings });
}

/**
 * Answering comes first: every thread of this process gets a nice value of 5, so that on a
 * busy core the service's threads get about three quarters of it (at 10 an xDS ACK under full
 * load took half as long again, answers no faster). On Linux a nice value is per thread (threads
 * made later inherit it from the one that makes them); elsewhere 0 names the process.
 */
function yieldToAnswering(): void {
  let threads: number[] = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // no /proc: the process as a whole
  }
  for (const thread of threads) {
    try {
      setPriority(thread, 5);
    } catch {
      // not allowed here: the service's priority
    }
  }
}

yieldToAnswering();
// Without the service there is no one to send the tables to.
process.once('disconnect', () => process.exit(0));
// The job comes first; each `next` after the header asks for the next part, so that the
// service builds one before the next arrives. The service ends this process when it is done.
process.on('message', (message: ToCompiler) => {
  if (message.type === 'job') {
    run(message.input).catch((err: unknown) => {
      send({ type: 'failed', message: describeError(err) });
    });
    return;
  }
  const part = parts.shift();
  if (part !== undefined) send({ type: 'part', part });
});
