// A machine without a program the tests run fails the suite naming the program and its package.
import { spawnSync } from 'node:child_process';
import { missingPythonModule, runProgram } from '../../helpers/programs';

const NO_PATH = { env: { PATH: '/nonexistent' } };

it.each([
  ['helm', /cannot run helm \(not found on PATH\): install helm from https:\/\/helm\.sh/],
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
