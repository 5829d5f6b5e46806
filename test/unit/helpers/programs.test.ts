// A machine without a program the tests run fails the suite naming the program and its package;
// helm is also found where scripts/get-helm.sh keeps it.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

it('runs the helm scripts/get-helm.sh keeps when none is on PATH, where the script says', () => {
  const cache = mkdtempSync(path.join(os.tmpdir(), 'rl-get-helm-'));
  try {
    // A stand-in for the fetched binary, where the script keeps it: the script finds it there
    // (fetching nothing) and prints its directory, and the tests run it without a PATH change.
    // No PATH at all: a helm installed on this machine is not found first.
    const env = { PATH: '/nonexistent', XDG_CACHE_HOME: cache };
    const helm = fetchedHelm(env)!;
    mkdirSync(path.dirname(helm), { recursive: true });
    writeFileSync(helm, '#!/bin/sh\necho "fetched helm $*"\n');
    chmodSync(helm, 0o755);
    const script = spawnSync(
      '/bin/bash',
      [path.join(__dirname, '..', '..', '..', 'scripts', 'get-helm.sh')],
      { env, encoding: 'utf8' },
    );
    expect([script.status, script.stdout.trim()]).toEqual([0, path.dirname(helm)]);
    expect(runProgram('helm', ['version'], { env }).stdout).toBe('fetched helm version\n');
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});
