// A machine without a program the tests run fails the suite naming the program and its package;
// helm is also found where scripts/get-helm.sh keeps it, which checks what it keeps.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fetchedHelm, missingPythonModule, runProgram } from '../../helpers/programs';

const NO_PATH = { env: { PATH: '/nonexistent' } };

it.each([
  [
    'helm',
    /cannot run helm \(not found on PATH\): install helm from https:\/\/helm\.sh, or run scripts\/get-helm\.sh/,
  ],
  ['kubectl', /cannot run kubectl .*install Debian's kubernetes-client/],
  ['h2load', /cannot run h2load .*install Debian's nghttp2-client/],
  ['openssl', /cannot run openssl .*install Debian's openssl/],
])('names %s and its package when it is missing', (program, message) => {
  expect(() => runProgram(program, ['--version'], NO_PATH)).toThrow(message);
});

it('names the Debian package of a Python module that is missing', () => {
  const run = spawnSync('/usr/bin/python3', ['-c', 'import no_such_module_here'], {
    encoding: 'utf8',
  });
  expect(missingPythonModule(run.stderr)).toBe(
    "python3 has no module no_such_module_here: install Debian's python3-no_such_module_here",
  );
  expect(missingPythonModule("ModuleNotFoundError: No module named 'grpc'")).toBe(
    "python3 has no module grpc: install Debian's python3-grpcio",
  );
});

it('runs a program that is there', () => {
  expect(runProgram('openssl', ['version']).stdout).toMatch(/^OpenSSL /);
});

/** A helm stand-in where scripts/get-helm.sh keeps what it fetched, for the environment `env`. */
function keptHelm(env: NodeJS.ProcessEnv): string {
  const helm = fetchedHelm(env)!;
  mkdirSync(path.dirname(helm), { recursive: true });
  writeFileSync(helm, '#!/bin/sh\necho "fetched helm $*"\n');
  chmodSync(helm, 0o755);
  return helm;
}

it('runs the helm kept where scripts/get-helm.sh keeps it when none is on PATH', () => {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'rl-get-helm-'));
  try {
    // No PATH at all: a helm installed on this machine is not found first.
    const env = { PATH: '/nonexistent', XDG_CACHE_HOME: cache };
    keptHelm(env);
    expect(runProgram('helm', ['version'], { env }).stdout).toBe('fetched helm version\n');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

it('get-helm.sh refuses a kept helm whose SHA-256 is not the one it pins', () => {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'rl-get-helm-'));
  try {
    // Only the programs the script runs on a kept helm: no helm on PATH is found first.
    const bin = path.join(cache, 'bin');
    mkdirSync(bin);
    for (const program of ['sha256sum', 'cut']) {
      const found = spawnSync('/bin/sh', ['-c', `command -v ${program}`], { encoding: 'utf8' });
      symlinkSync(found.stdout.trim(), path.join(bin, program));
    }
    const env = { PATH: bin, XDG_CACHE_HOME: cache };
    const helm = keptHelm(env);
    const script = spawnSync(
      '/bin/bash',
      [path.join(__dirname, '..', '..', '..', 'scripts', 'get-helm.sh')],
      { env, encoding: 'utf8' },
    );
    expect(script.status).toBe(1);
    expect(script.stdout).toBe('');
    expect(script.stderr).toContain(`${helm} has SHA-256 `);
    expect(script.stderr).toMatch(/not the pinned [0-9a-f]{64}: not using it/);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
