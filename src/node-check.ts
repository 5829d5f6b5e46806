// The first thing every command does: compare the running Node.js with package.json's engines
// (lib/node-support.ts) and refuse an older one or warn about an untested newer one, before
// code that may need the supported releases is loaded.
import cluster from 'node:cluster';
import { writeProcessLine } from './lib/logger';
import { nodeVerdict, packageEngines } from './lib/node-support';
import { logFormatOf } from './settings';

/**
 * Exits 1 on a Node older than engines allows, and writes a warning on one newer that engines
 * does not name. The service (`ratelimit`) writes in its LOG_FORMAT, as every line it writes;
 * the tools write a plain line naming themselves.
 */
export function requireSupportedNode(command: string): void {
  // A WORKERS supervisor has said it already; its workers run this same script.
  if (cluster.isWorker) return;
  const range = packageEngines();
  if (range === undefined) return;
  const verdict = nodeVerdict(process.version, range);
  if (verdict.kind === 'supported') return;
  const level = verdict.kind === 'refuse' ? 'fatal' : 'warning';
  if (command === 'ratelimit') writeProcessLine(logFormatOf(process.env), level, verdict.message);
  else process.stderr.write(`${command}: ${verdict.message}\n`);
  if (verdict.kind === 'refuse') process.exit(1);
}
