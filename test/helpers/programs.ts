// Programs the tests run (openssl, h2load, helm, kubectl, redis-cli, python modules): a missing
// one fails the suite naming it and the package that provides it, never skips it.
import { spawnSync, type SpawnSyncOptionsWithStringEncoding } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The Debian package (or the way to get it) of each program the tests run. */
export const PROVIDED_BY: Readonly<Record<string, string>> = Object.freeze({
  'redis-server': "Debian's redis-server",
  'redis-cli': "Debian's redis-tools",
  memcached: "Debian's memcached",
  openssl: "Debian's openssl",
  kubectl: "Debian's kubernetes-client",
  h2load: "Debian's nghttp2-client",
  helm: 'helm from https://helm.sh, or run scripts/get-helm.sh',
  chromium: "Debian's chromium",
  prometheus: "Debian's prometheus",
  promtool: "Debian's prometheus",
});

/** What to say when `program` cannot be started. */
export function missingProgram(program: string, why: string): Error {
  const from = PROVIDED_BY[program] ?? 'its package';
  return new Error(
    `cannot run ${program} (${why}): install ${from}; .ci/run installs every program npm test needs`,
  );
}

/** The text of a Python failure to import, as the Debian package to install. */
export function missingPythonModule(stderr: string): string | undefined {
  const module = /No module named '([\w.]+)'/.exec(stderr)?.[1]?.split('.')[0];
  if (module === undefined) return undefined;
  const packageName =
    module === 'grpc_tools' ? 'grpc-tools' : module === 'grpc' ? 'grpcio' : module;
  return `python3 has no module ${module}: install Debian's python3-${packageName}`;
}

/**
 * Where scripts/get-helm.sh keeps the helm it fetches, for the environment `env`: the tests run
 * it from there when helm is not on PATH, so the README's install line needs no PATH change.
 */
export function fetchedHelm(env: NodeJS.ProcessEnv): string | undefined {
  const cache =
    env.XDG_CACHE_HOME ?? (env.HOME === undefined ? undefined : path.join(env.HOME, '.cache'));
  return cache === undefined ? undefined : path.join(cache, 'ratelimit-ci', 'helm');
}

/** Runs `program` to the end; throws naming it and its package when it is not installed. */
export function runProgram(
  program: string,
  args: readonly string[],
  options: Omit<SpawnSyncOptionsWithStringEncoding, 'encoding'> = {},
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(program, args, { ...options, encoding: 'utf8' });
  if (run.error !== undefined && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
    const fetched = program === 'helm' ? fetchedHelm(options.env ?? process.env) : undefined;
    if (fetched !== undefined && existsSync(fetched)) return runProgram(fetched, args, options);
    throw missingProgram(program, 'not found on PATH');
  }
  if (run.error !== undefined) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}
