// The simulator's reading of rule files: what it sends for each rule, and how it refuses a file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ConfigFileError,
  readConfigDirectory,
  resourceFromYaml,
} from '../../../control-plane-sim/src/config-files';
import { messageType, RATE_LIMIT_CONFIG } from '../../../src/lib/proto';

type Decoded = { descriptors?: { rateLimit?: Record<string, unknown> }[] };

function decoded(yamlText: string): Decoded {
  const type = messageType(RATE_LIMIT_CONFIG.file, RATE_LIMIT_CONFIG.name);
  const message = type.decode(resourceFromYaml('r', yamlText).value);
  return type.toObject(message, { enums: String });
}

function refusal(yamlText: string, file = 'rules/api.yaml'): string {
  try {
    resourceFromYaml('api', yamlText, file);
  } catch (err: unknown) {
    expect(err).toBeInstanceOf(ConfigFileError);
    return (err as Error).message;
  }
  throw new Error('the file was accepted');
}

it('leaves the algorithm out when the file names none, as a file without the key reads', () => {
  const doc = decoded('domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unlimited: true }\n');
  const rateLimit = doc.descriptors?.[0]?.rateLimit;
  expect(rateLimit?.unlimited).toBe(true);
  expect(rateLimit).not.toHaveProperty('algorithm');
});

it('sends the algorithm the file names', () => {
  const doc = decoded(
    'domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, requests_per_unit: 2, algorithm: token_bucket }\n',
  );
  expect(doc.descriptors?.[0]?.rateLimit?.algorithm).toBe('TOKEN_BUCKET');
});

it('refuses an unknown algorithm, naming the file, line, column and rule', () => {
  const text = [
    'domain: api',
    'descriptors:',
    '  - key: tier',
    '    value: free',
    '    descriptors:',
    '      - key: user',
    '        rate_limit: { unit: minute, requests_per_unit: 5, algorithm: leaky_bucket }',
    '',
  ].join('\n');
  expect(refusal(text)).toBe(
    'rules/api.yaml:7:70: rule tier=free > user (at descriptors[0].descriptors[0].rate_limit): unknown algorithm "leaky_bucket"; accepted: fixed_window, sliding_window, token_bucket',
  );
});

it('refuses an unknown unit, naming it, the file, line, column and rule, and the accepted ones', () => {
  const text =
    'domain: api\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight, requests_per_unit: 5 }\n';
  expect(refusal(text)).toBe(
    'rules/api.yaml:4:25: rule k (at descriptors[0].rate_limit): unknown unit "fortnight"; accepted: second, minute, hour, day, week, month, year',
  );
  // Without a unit the rule still goes, as UNKNOWN, for the service to refuse.
  expect(
    decoded('domain: d\ndescriptors:\n  - key: k\n    rate_limit: { requests_per_unit: 2 }\n')
      .descriptors?.[0]?.rateLimit?.unit,
  ).toBe('UNKNOWN');
});

it('refuses a key the resource has no field for, at any level, naming where it is', () => {
  expect(refusal('domain: api\ndescriptor:\n  - key: k\n')).toMatch(
    /^rules\/api\.yaml:2:1: unknown key 'descriptor' at the top level; accepted: domain, descriptors, quota_buckets$/,
  );
  expect(refusal('domain: api\ndescriptors:\n  - key: k\n    shadowmode: true\n')).toMatch(
    /^rules\/api\.yaml:4:\d+: unknown key 'shadowmode' at descriptors\[0\]; accepted: key, /,
  );
  expect(
    refusal(
      'domain: api\ndescriptors:\n  - key: k\n    rate_limit: { unit: second, request_per_unit: 5 }\n',
    ),
  ).toMatch(
    /^rules\/api\.yaml:4:\d+: unknown key 'request_per_unit' at descriptors\[0\]\.rate_limit; accepted: unit, requests_per_unit, /,
  );
});

it('names the file and line of a YAML error, not the directory', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-files-'));
  writeFileSync(path.join(dir, 'good.yaml'), 'domain: good\ndescriptors: []\n');
  writeFileSync(path.join(dir, 'broken.yaml'), 'domain: broken\ndescriptors:\n  - key: [a\n');
  expect(() => readConfigDirectory(dir)).toThrow(
    new RegExp(`^${path.join(dir, 'broken.yaml').replace(/[.]/g, '\\.')}:4:1: `),
  );
});
