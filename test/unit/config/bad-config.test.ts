// One fixture per refused configuration: each asserts its error code and its exact message.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  compile,
  ConfigError,
  CONFIG_ERROR_CODES,
  parseConfigFile,
  type ConfigDocument,
} from '../../../src/config';
import { StatsStore } from '../../../src/stats';

const DIR = path.resolve(__dirname, '..', '..', 'fixtures', 'config', 'bad');

/** A backend that cannot run token buckets, as memcached is. */
const NO_TOKEN_BUCKET = { name: 'memcache', unsupported: { token_bucket: 'no atomic script' } };

/** Parses and compiles fixtures; returns every error, or throws when they load. */
function errorsOf(names: readonly string[], merge = false): ConfigError[] {
  const errors: ConfigError[] = [];
  const docs: ConfigDocument[] = [];
  for (const name of names) {
    const parsed = parseConfigFile(name, readFileSync(path.join(DIR, name), 'utf8'));
    if (parsed instanceof ConfigError) errors.push(parsed);
    else docs.push(parsed);
  }
  const result = compile(docs, {
    stats: new StatsStore(),
    mergeDomainConfig: merge,
    sanitizeDots: false,
    // Only the fixture about the backend is compiled for one that lacks an algorithm.
    ...(names.some((n) => n.includes('unsupported')) ? { backend: NO_TOKEN_BUCKET } : {}),
  });
  if (!result.ok) errors.push(...result.errors);
  return errors;
}

describe('each bad file is refused with its code, file name and reason', () => {
  it.each([
    [
      'yaml-parse.yaml',
      'YAML_PARSE',
      // The misaligned item's own column, not the start of its indentation.
      /^yaml-parse\.yaml: error loading config file: .+ \(line 4, column 4\)$/,
    ],
    [
      'not-a-map.yaml',
      'NOT_A_MAP',
      /^not-a-map\.yaml: error loading config file: the document must be a map with domain and descriptors \(line 1, column 1\)$/,
    ],
    [
      'key-not-string.yaml',
      'KEY_NOT_STRING',
      /^key-not-string\.yaml: config error, key is not of type string: 1 \(line 4, column 5, at descriptors\[0\]\.1\)$/,
    ],
    [
      'unknown-key.yaml',
      'UNKNOWN_KEY',
      /^unknown-key\.yaml: config error, unknown key 'ratelimit' \(line 4, column 5, at descriptors\[0\]\.ratelimit\)$/,
    ],
    [
      'list-not-maps.yaml',
      'LIST_NOT_MAPS',
      /^list-not-maps\.yaml: config error, yaml file contains list of type other than map: "just a string" \(line 4, column 5, at descriptors\[1\]\)$/,
    ],
    [
      'bad-value-text.yaml',
      'BAD_VALUE',
      /^bad-value-text\.yaml: config error, 'requests_per_unit' must be a whole number from 0 to 4294967295, got "ten" \(line 6, column 26, at descriptors\[0\]\.rate_limit\.requests_per_unit\)$/,
    ],
    [
      'bad-value-negative.yaml',
      'BAD_VALUE',
      /^bad-value-negative\.yaml: config error, 'requests_per_unit' must be a whole number from 0 to 4294967295, got "-1" /,
    ],
    [
      'bad-value-huge.yaml',
      'BAD_VALUE',
      /^bad-value-huge\.yaml: config error, 'requests_per_unit' must be a whole number from 0 to 4294967295, got "4294967296" /,
    ],
    [
      'bad-value-bool.yaml',
      'BAD_VALUE',
      /^bad-value-bool\.yaml: config error, 'shadow_mode' must be true or false, got "maybe" \(line 4, column 18, at descriptors\[0\]\.shadow_mode\)$/,
    ],
    [
      'bad-value-descriptors-map.yaml',
      'BAD_VALUE',
      /^bad-value-descriptors-map\.yaml: config error, 'descriptors' must be a list, got a map \(line 5, column 7, at descriptors\[0\]\.descriptors\)$/,
    ],
    [
      'empty-domain.yaml',
      'EMPTY_DOMAIN',
      /^empty-domain\.yaml: config file cannot have empty domain$/,
    ],
    [
      'empty-key.yaml',
      'EMPTY_KEY',
      /^empty-key\.yaml: descriptor has empty key \(line 3, column 5, at descriptors\[0\]\)$/,
    ],
    [
      'duplicate-descriptor.yaml',
      'DUPLICATE_DESCRIPTOR',
      /^duplicate-descriptor\.yaml: duplicate descriptor composite key 'twice\.a_v' \(line 6, column 5, at descriptors\[1\]\)$/,
    ],
    [
      'invalid-unit.yaml',
      'INVALID_UNIT',
      /^invalid-unit\.yaml: invalid rate limit unit 'fortnight'; accepted: second, minute, hour, day, week, month, year \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'missing-unit.yaml',
      'INVALID_UNIT',
      /^missing-unit\.yaml: invalid rate limit unit ''; accepted: second, minute, hour, day, week, month, year \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'unlimited-with-unit.yaml',
      'UNLIMITED_WITH_UNIT',
      /^unlimited-with-unit\.yaml: should not specify rate limit unit when unlimited \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'empty-replaces.yaml',
      'EMPTY_REPLACES',
      /^empty-replaces\.yaml: should not have an empty replaces entry \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'self-replaces.yaml',
      'SELF_REPLACES',
      /^self-replaces\.yaml: replaces should not contain name of same descriptor \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'share-threshold-without-wildcard.yaml',
      'SHARE_THRESHOLD_WITHOUT_WILDCARD',
      /^share-threshold-without-wildcard\.yaml: share_threshold can only be used with wildcard values \(containing '\*'\), but found key 'a_exact' \(line 3, column 5, at descriptors\[0\]\)$/,
    ],
    [
      'invalid-algorithm.yaml',
      'INVALID_ALGORITHM',
      /^invalid-algorithm\.yaml: invalid rate limit algorithm 'leaky_bucket'; accepted: fixed_window, sliding_window, token_bucket \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'burst-without-token-bucket.yaml',
      'BAD_LIMIT',
      /^burst-without-token-bucket\.yaml: burst only applies to algorithm token_bucket \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'token-bucket-zero-rate.yaml',
      'BAD_LIMIT',
      /^token-bucket-zero-rate\.yaml: token_bucket needs requests_per_unit of at least 1 /,
    ],
    [
      'duplicate-limit-unit.yaml',
      'DUPLICATE_LIMIT_UNIT',
      /^duplicate-limit-unit\.yaml: descriptor 'limits\.a' has two limits of unit second; each limit needs its own unit \(line 10, column 9, at descriptors\[0\]\.rate_limits\[1\]\)$/,
    ],
    [
      'unlimited-with-limits.yaml',
      'UNLIMITED_WITH_LIMITS',
      /^unlimited-with-limits\.yaml: an unlimited rule cannot also have rate_limits \(line 5, column 7, at descriptors\[0\]\.rate_limit\)$/,
    ],
    [
      'algorithm-unsupported.yaml',
      'ALGORITHM_UNSUPPORTED',
      /^algorithm-unsupported\.yaml: rule 'backend\.a' uses token_bucket, which the memcache backend cannot run: no atomic script \(line 5, column 9, at descriptors\[0\]\.rate_limits\[0\]\)$/,
    ],
    [
      'alias-bomb.yaml',
      'TOO_MUCH_EXPANSION',
      /^alias-bomb\.yaml: config error, YAML aliases expand the file to more nodes than the loader reads \(an alias bomb\?\) \(line \d+, column \d+, at descriptors\[\d+\]\.key\)$/,
    ],
    [
      'too-deep.yaml',
      'TOO_DEEP',
      /^too-deep\.yaml: config error, descriptors nest deeper than 64 levels \(line 132, column \d+, at (descriptors\[0\]\.){64}descriptors\)$/,
    ],
  ])('%s', (name, code, message) => {
    const errors = errorsOf([name]);
    expect(errors.map((e) => e.code)).toEqual([code]);
    expect(errors[0]?.message).toMatch(message);
    expect(errors[0]?.source).toBe(name);
  });

  it('two files of one domain without MERGE_DOMAIN_CONFIG', () => {
    const errors = errorsOf(['duplicate-domain-1.yaml', 'duplicate-domain-2.yaml']);
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      ['DUPLICATE_DOMAIN', "duplicate-domain-2.yaml: duplicate domain 'dup' in config file"],
    ]);
    expect(errorsOf(['duplicate-domain-1.yaml', 'duplicate-domain-2.yaml'], true)).toEqual([]);
  });

  it('a key defined in two merged files', () => {
    const errors = errorsOf(['merge-duplicate-key-1.yaml', 'merge-duplicate-key-2.yaml'], true);
    expect(errors.map((e) => [e.code, e.message])).toEqual([
      [
        'DUPLICATE_DESCRIPTOR',
        "merge-duplicate-key-2.yaml: duplicate descriptor composite key 'merged.a' (line 3, column 5, at descriptors[0])",
      ],
    ]);
  });
});

it('reports the problems of every file of a load at once', () => {
  const errors = errorsOf([
    'invalid-unit.yaml',
    'empty-key.yaml',
    'yaml-parse.yaml',
    'duplicate-domain-1.yaml',
    'duplicate-domain-2.yaml',
  ]);
  expect(errors.map((e) => e.code).sort()).toEqual([
    'DUPLICATE_DOMAIN',
    'EMPTY_KEY',
    'INVALID_UNIT',
    'YAML_PARSE',
  ]);
});

it('refuses a file nested too deep for the YAML parser itself, and a resource too deep to compile', () => {
  const text = `domain: d\ndescriptors: ${'[{key: k, descriptors: '.repeat(20_000)}[]${'}]'.repeat(20_000)}`;
  const parsed = parseConfigFile('deeper.yaml', text);
  expect(parsed).toBeInstanceOf(ConfigError);
  expect((parsed as ConfigError).code).toBe('TOO_DEEP');
  // A document with no YAML behind it (an xDS resource) is refused by the compiler.
  let descriptors: ConfigDocument['descriptors'] = [];
  for (let i = 0; i < 100; i++) {
    descriptors = [
      {
        key: `k${i}`,
        value: undefined,
        rateLimit: undefined,
        rateLimits: [],
        descriptors,
        shadowMode: false,
        quotaMode: false,
        detailedMetric: false,
        valueToMetric: false,
        shareThreshold: false,
        metadata: undefined,
        position: undefined,
      },
    ];
  }
  const result = compile([{ source: 'resource r', domain: 'd', descriptors, warnings: [] }], {
    stats: new StatsStore(),
    mergeDomainConfig: false,
    sanitizeDots: false,
  });
  expect(result.ok ? [] : result.errors.map((e) => e.message)).toEqual([
    'resource r: descriptors nest deeper than 64 levels',
  ]);
});

it('has a fixture for every code a file can trigger, and every code is documented', () => {
  const docs = readFileSync(
    path.resolve(__dirname, '..', '..', '..', 'docs', 'configuration-errors.md'),
    'utf8',
  );
  for (const code of Object.keys(CONFIG_ERROR_CODES))
    expect({ code, documented: docs.includes(`\`${code}\``) }).toEqual({ code, documented: true });
});
