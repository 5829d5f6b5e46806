// Which Node.js releases the commands run on: those package.json's `engines` names. Read by the
// bin/ scripts before anything else is loaded (docs/decisions/unsupported-node.md says why an
// older Node is refused and a newer one only warned about).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A release as major, minor, patch. */
type Release = readonly [number, number, number];

/** What to do on this Node: run, run with a warning, or refuse. */
export type NodeVerdict =
  { readonly kind: 'supported' } | { readonly kind: 'warn' | 'refuse'; readonly message: string };

function release(text: string): Release | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])];
}

function compare(a: Release, b: Release): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * The lowest release of each line `engines.node` names, for the form this package writes
 * (`^24.22.0 || ^26.12.0`: caret ranges joined by `||`); throws on any other form, so that a
 * change to engines that this reader does not understand fails the tests, not a user.
 */
export function engineLines(range: string): Release[] {
  return range.split('||').map((part) => {
    const match = /^\s*\^(\d+\.\d+\.\d+)\s*$/.exec(part);
    const lowest = match?.[1] === undefined ? undefined : release(match[1]);
    if (lowest === undefined) throw new Error(`engines.node "${range}" is not ^x.y.z || ^x.y.z`);
    return lowest;
  });
}

const HOW_TO_GET = 'scripts/node-major.sh and .nvmrc in the source tell how to get one';

/** The verdict on Node `version` (process.version) for `engines.node` = `range`. */
export function nodeVerdict(version: string, range: string): NodeVerdict {
  const lines = engineLines(range);
  const running = release(version);
  if (running === undefined) return { kind: 'supported' };
  const isInLine = lines.some((l) => l[0] === running[0] && compare(running, l) >= 0);
  if (isInLine) return { kind: 'supported' };
  const oldest = lines.reduce((a, b) => (compare(a, b) <= 0 ? a : b));
  const named = `Node.js ${version} is not one that package.json "engines" names (node ${range})`;
  if (compare(running, oldest) < 0)
    return {
      kind: 'refuse',
      message: `${named}, and is older than the oldest it does: refusing to start. Run it on one of those releases; ${HOW_TO_GET}`,
    };
  return {
    kind: 'warn',
    message: `${named}; it is newer than ${oldest.join('.')} and may work, but is not tested. ${HOW_TO_GET}`,
  };
}

/** `engines.node` of this package's package.json (found from dist/src/lib or src/lib). */
export function packageEngines(): string | undefined {
  for (const up of ['../..', '../../..']) {
    const file = path.resolve(__dirname, up, 'package.json');
    if (!existsSync(file)) continue;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as {
      name?: string;
      engines?: { node?: string };
    };
    if (parsed.name === 'ratelimit-ts') return parsed.engines?.node;
  }
  return undefined;
}
