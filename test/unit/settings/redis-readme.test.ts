// The Redis deployment examples of docs/backends.md are settings the service accepts, as written.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../../../src/settings';
import { commands, section } from '../../helpers/deploy/readme-commands';

const DOC = readFileSync(path.join(__dirname, '..', '..', '..', 'docs', 'backends.md'), 'utf8');
const examples = commands(section(DOC, 'Redis deployments'));

it('has a copy-paste example for each kind, TLS and IAM', () => {
  const types = examples.map((words) => words.find((w) => w.startsWith('REDIS_TYPE=')) ?? '');
  expect(types).toEqual(['REDIS_TYPE=sentinel', 'REDIS_TYPE=cluster', '', 'REDIS_TYPE=cluster']);
  expect(examples.map((words) => words.at(-1))).toEqual(Array(4).fill('ratelimit'));
});

it.each(examples.map((words) => [words.join(' '), words] as const))('accepts %s', (_, words) => {
  const env = Object.fromEntries(
    words
      .filter((w) => /^[A-Z_]+=/.test(w))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  );
  const backend = loadSettings(env).backend;
  expect(backend.type).toBe('redis');
});
