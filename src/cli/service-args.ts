// The `ratelimit` command's arguments: --version, -h/--help, and nothing else, since every
// setting comes from the environment.
import { SERVICE_NAME, SERVICE_VERSION } from '../lib/version';
import { serviceUsage } from './settings-reference';

/** The arguments that ask for usage, as Go's flag package reads them. */
const HELP_FLAGS = new Set(['-h', '-help', '--help']);

/**
 * Answers the arguments that do not start the service: the exit code once answered, or
 * undefined when the service should start (no arguments). Settings are not read.
 */
export function answerServiceArgs(
  argv: readonly string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number | undefined {
  if (argv.includes('--version')) {
    out.write(`${SERVICE_NAME} ${SERVICE_VERSION}\n`);
    return 0;
  }
  if (argv.some((arg) => HELP_FLAGS.has(arg))) {
    out.write(serviceUsage());
    return 0;
  }
  if (argv.length === 0) return undefined;
  // A flag here is a mistake, not something to ignore.
  err.write(
    `ratelimit: unexpected argument ${JSON.stringify(argv[0])}: settings come from the environment (see ratelimit --help)\n`,
  );
  return 2;
}
